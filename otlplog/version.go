package otlplog

// Version is this module's version, sent as part of the exporter's
// User-Agent.
const Version = "0.1.0"
