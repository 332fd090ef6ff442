// Package declarative is the hook through which a reader of an
// OpenTelemetry declarative configuration file (OTEL_CONFIG_FILE) is
// registered, the Settings it hands zaplens's pipeline, and the part of
// the file the reader reads, in plain Go types.
//
// The pipeline (otlplog) takes Settings, values resolved and checked, and
// nothing else: the reader, which parses the file with otelconf (and so
// links the SDK's trace and metric exporters) and turns what it says into
// settings, lives in otlplog/configfile and registers itself when a
// program imports it. A program that does not import it pays for neither.
//
// Config and the types under it mirror the configuration schema's, field
// for field, keeping "absent" (nil) apart from "zero"; only the reader
// uses them.
package declarative

import (
	"context"
	"crypto/tls"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
)

// Config is what a configuration file says of the logs, as read.
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

// Settings are what a configuration file sets of the pipeline, each value
// resolved and checked as far as it can be without the options: the
// pipeline gives a setting no option set the file's value (a Value), and
// tells the error of a value only then, as an option replaces it unread.
// The errors that do not depend on an option (Exporter.Refused,
// ResourceErr) are told whatever the options say. Errors name the file's
// key, not the file, which the pipeline adds.
type Settings struct {
	Disabled bool // disabled: true, or no logger_provider: nothing more is set

	// logger_provider.processors[0].batch
	QueueSize, BatchSize         Value[int]
	ScheduleDelay, ExportTimeout Value[time.Duration]
	Exporter                     ExporterSettings

	// logger_provider.limits, else attribute_limits
	AttributeCount, AttributeValueLength Value[int]

	// The resource section, built as otelconf builds it, and why it could
	// not be.
	Resource    *resource.Resource
	ResourceErr error
}

// ExporterSettings are what the file sets of the batch processor's
// exporter.
type ExporterSettings struct {
	// Refused says why the file gives no exporter zaplens runs, or more
	// than one.
	Refused error
	// Name is "otlp" or "console", at the exporter's key; its Err refuses
	// the exporter's kind (OTLP/HTTP with JSON). An option that chose the
	// exporter leaves the file's unread: the rest too.
	Name                            Value[string]
	Protocol, Endpoint, Compression Value[string]
	Timeout                         Value[time.Duration]
	Headers                         Value[map[string]string]
	TLS                             Value[*tls.Config]
}

// Value is a value the file gives a setting, at its key, or the error
// that refuses it.
type Value[T any] struct {
	At  string // its key, for messages; "": the file does not give it
	V   T
	Err error // why V cannot be used, naming At
}

// A Loader reads a configuration file's bytes, substituting its ${VAR}
// references, into the Settings. Its error (a file that does not parse, a
// processor zaplens does not run) is told whatever the options say.
type Loader func(ctx context.Context, file []byte) (*Settings, error)

var loader atomic.Pointer[Loader]

// Register makes l the reader of configuration files, replacing any
// before it; nil unregisters it. otlplog/configfile calls it from init.
func Register(l Loader) {
	if l == nil {
		loader.Store(nil)
		return
	}
	loader.Store(&l)
}

// Registered returns the reader registered, nil if none is.
func Registered() Loader {
	if l := loader.Load(); l != nil {
		return *l
	}
	return nil
}
