// Package declarative is the part of an OpenTelemetry declarative
// configuration file (OTEL_CONFIG_FILE) that zaplens's pipeline reads, in
// plain Go types, and the hook through which a parser of the file is
// registered.
//
// The pipeline (otlplog) reads a Config and nothing else; the parser,
// which needs otelconf and so links the SDK's trace and metric exporters,
// lives in otlplog/configfile and registers itself when a program imports
// it. A program that does not import it pays nothing for the file.
//
// The types mirror the configuration schema's, field for field, keeping
// "absent" (nil) apart from "zero", so that the pipeline checks and
// applies the file exactly as it read otelconf's types.
package declarative

import "sync/atomic"

// Config is what a configuration file says of the logs.
type Config struct {
	Disabled        bool            // disabled: true
	AttributeLimits *Limits         // attribute_limits, the general ones
	LoggerProvider  *LoggerProvider // logger_provider; nil: none given
	Resource        *Resource       // resource
}

// LoggerProvider is the logger_provider section.
type LoggerProvider struct {
	Limits     *Limits // limits
	Processors []Processor
}

// Limits are attribute limits: attribute_limits or logger_provider.limits.
type Limits struct {
	AttributeCountLimit       *int
	AttributeValueLengthLimit *int
}

// Processor is one of logger_provider.processors.
type Processor struct {
	Simple bool   // a simple processor, whatever its exporter
	Batch  *Batch // a batch processor
}

// Batch is a batch processor.
type Batch struct {
	MaxQueueSize       *int
	MaxExportBatchSize *int
	ScheduleDelay      *int // milliseconds
	ExportTimeout      *int // milliseconds
	Exporter           Exporter
}

// Exporter is a processor's exporter: at most one of its fields should
// be set; none is set for an exporter the schema has that zaplens does
// not run (file, an extension's).
type Exporter struct {
	Console  bool
	OTLPGrpc *OTLP
	OTLPHttp *OTLP
}

// OTLP is an otlp_grpc or otlp_http exporter.
type OTLP struct {
	Endpoint    *string
	Compression *string
	Timeout     *int // milliseconds
	Headers     []Header
	HeadersList *string
	Encoding    *string // otlp_http only: protobuf or json
	TLS         TLS
}

// Header is one of an exporter's headers; a nil Value is YAML's null.
type Header struct {
	Name  string
	Value *string
}

// TLS is an exporter's tls section.
type TLS struct {
	CAFile, CertFile, KeyFile *string
	Insecure                  *bool // otlp_grpc only
}

// Resource is the resource section.
type Resource struct {
	Attributes     []Attribute
	AttributesList *string
	SchemaURL      *string
}

// Attribute is one of resource.attributes: its value as the parser read
// it (bool, int, float64, string, or []any of those), and its type as the
// schema names it (string, bool_array, int_array...), "" if not given.
type Attribute struct {
	Name  string
	Type  string
	Value any
}

// A Parser reads a configuration file's bytes, substituting its ${VAR}
// references, into the Config.
type Parser func(file []byte) (*Config, error)

var parser atomic.Pointer[Parser]

// Register makes p the parser of configuration files, replacing any
// before it; nil unregisters it. otlplog/configfile calls it from init.
func Register(p Parser) {
	if p == nil {
		parser.Store(nil)
		return
	}
	parser.Store(&p)
}

// Registered returns the parser registered, nil if none is.
func Registered() Parser {
	if p := parser.Load(); p != nil {
		return *p
	}
	return nil
}
