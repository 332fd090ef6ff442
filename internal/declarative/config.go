package declarative

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
