// Package confval reads the values of the OpenTelemetry configuration
// that come alike from an environment variable and from a declarative
// configuration file (OTEL_CONFIG_FILE): key=value lists, PEM files and
// the TLS configuration they make, compression names, milliseconds.
// otlplog reads the variables with it and otlplog/configfile the file
// (but for the tls section's certificate files, which otlplog reads
// only when no option replaces them), so that both read a value one way,
// and the file's reading, which only configfile links, shares nothing
// with the pipeline but this.
//
// Every function names what it read by the name its caller gives, a
// variable or a file's key, and never quotes a value that may be a
// secret.
package confval
