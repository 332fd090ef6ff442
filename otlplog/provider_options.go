package otlplog

import (
	"crypto/tls"
	"io"
	"maps"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/zaplens/zaplens/internal/pipeline"
)

// Defaults of the export pipeline, sized for a busy training rank that logs
// 10,000 lines per step as fast as its loop goes, then computes for about
// half a second. Records wait as their OTLP bytes, 139 bytes for such a
// line of four fields with a trace, so the default queue holds a burst of
// 100,000 lines with room to spare; its memory is taken as records arrive and given back
// as they leave, not allocated at start. The README has measurements.
const (
	// DefaultQueueBytes is how many bytes of records may wait for export.
	DefaultQueueBytes = 24 << 20
	// DefaultRequestBytes bounds one export request: under the 4 MiB a
	// Collector accepts by default over gRPC, with room to spare.
	DefaultRequestBytes = 3 << 20
	// DefaultBatchSize is the most records sent in one export: about
	// 1.1 MB of such lines, within DefaultRequestBytes. Each request costs
	// the gRPC transport a fixed toll of allocations and CPU; measured in
	// benchmarks/ (BenchmarkCall), 512 records a request cost 0.2 more
	// allocations and about 300 ns more CPU per line than 8192.
	DefaultBatchSize = 8192
	// DefaultScheduleDelay is the longest a record waits for a batch that
	// does not fill.
	DefaultScheduleDelay = time.Second
	// DefaultExportTimeout bounds one export by the batch processor, the
	// spec's figure, for the console exporter. An OTLP export is bounded by
	// default by its retries' bound and one attempt's:
	// [DefaultRetryMaxElapsed] + [DefaultOTLPTimeout].
	DefaultExportTimeout = 30 * time.Second
	// DefaultOTLPTimeout bounds one attempt of an OTLP export: a request
	// and its answer.
	DefaultOTLPTimeout = 10 * time.Second
	// DefaultRetryMaxElapsed bounds how long a batch is retried, while the
	// queue has room: no attempt starts later than this after the first.
	// Twice the SDK's minute, so that a collector down for a minute and
	// the backoff's last wait fit in it: a quiet process loses nothing.
	DefaultRetryMaxElapsed = 2 * time.Minute
	// DefaultShutdownTimeout bounds Shutdown and ForceFlush when their
	// context has no deadline: with the collector down, an unbounded
	// Shutdown would wait out the OTLP timeout once per batch in the queue.
	DefaultShutdownTimeout = 10 * time.Second
	// StuckShutdownTimeout bounds Shutdown, when its context has no
	// deadline, after a flush that ran out of time: with the README's
	// pattern (Sync, then Shutdown) and a collector that never answers, a
	// program stops within the flush bound and this.
	StuckShutdownTimeout = 500 * time.Millisecond
	// DefaultReportInterval is how often losses are reported, if any.
	DefaultReportInterval = 10 * time.Second
	// DefaultEndpoint is the OTel spec's default for OTLP/gRPC: a
	// collector on this host, without TLS.
	DefaultEndpoint = "http://localhost:4317"
	// DefaultHTTPEndpoint is the OTel spec's default for OTLP/HTTP, to which
	// /v1/logs is added.
	DefaultHTTPEndpoint = "http://localhost:4318"
)

// A Option configures [NewLoggerProvider]. Options win over the
// environment variables that set the same thing.
type Option interface {
	applyProvider(*providerConfig)
}

type providerOptionFunc func(*providerConfig)

func (f providerOptionFunc) applyProvider(c *providerConfig) { f(c) }

// setting is a value given by an option, the configuration file or a
// variable, else defaulted. Where it came from decides what a bad value
// does, by the one rule of env.go (bad).
type setting[T any] struct {
	value T
	set   bool   // given, not defaulted
	env   bool   // by the variable from names: a bad value is ignored
	from  string // who gave it, for messages: a variable, an option, a file's setting
}

func (s *setting[T]) put(v T) { s.value, s.set = v, true }

// by is put by the option or file setting from names.
func (s *setting[T]) by(from string, v T) { s.put(v); s.from = from }

// providerConfig is everything NewLoggerProvider resolves before building.
type providerConfig struct {
	exporterName  setting[string] // otlp, console or none
	disabled      setting[bool]
	endpoint      setting[string]
	insecure      setting[bool]
	headers       setting[map[string]string]
	tlsConfig     setting[*tls.Config]
	compression   setting[string]
	otlpTimeout   setting[time.Duration]
	retryElapsed  setting[time.Duration]
	protocol      setting[string]
	queueSize     setting[int] // records; bounds the queue only when set
	queueBytes    setting[int]
	requestBytes  setting[int]
	batchSize     setting[int]
	scheduleDelay setting[time.Duration]
	exportTimeout setting[time.Duration]
	attrCount     setting[int]
	attrValueLen  setting[int]
	recordUID     setting[bool]
	warnings      []string // told once through the loss writer at start
	// resourceEnv is OTEL_RESOURCE_ATTRIBUTES's attributes; no option sets
	// it: WithResourceAttributes's go over it (optionAttributes).
	resourceEnv setting[map[string]string]
	// serviceFallback adds unknown_service:<program> to a given resource
	// that names no service: one from a configuration file, as otelconf's
	// default resource has it.
	serviceFallback bool
	spool           spoolConfig

	exportFunc     pipeline.ExportFunc // tests: replaces otlp and console
	consoleWriter  io.Writer
	blockOnFull    time.Duration
	serviceName    string
	resourceAttrs  []attribute.KeyValue
	resource       *resource.Resource // WithResource's; nil: detect
	redactKeys     []string
	reportInterval time.Duration
	report         func(Loss)
	reportWriter   io.Writer
	reportOff      bool
	meterProvider  metric.MeterProvider // metrics.go
	observability  setting[bool]        // OTEL_GO_X_OBSERVABILITY: the metrics through the global MeterProvider
}

// WithEndpoint sets where OTLP exports go, overriding
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT. It takes
// "https://host:port", "http://host:port" (no TLS) or "host:port" (TLS unless
// [WithInsecure]); the port defaults to 4317 for gRPC and 4318 for HTTP.
// Over OTLP/HTTP a URL without a path gets /v1/logs, one with a path is used
// as it is. The default is http://localhost:4317, or http://localhost:4318
// for OTLP/HTTP.
func WithEndpoint(endpoint string) Option {
	return providerOptionFunc(func(c *providerConfig) { c.endpoint.by("WithEndpoint", endpoint) })
}

// WithInsecure turns TLS off, whatever the endpoint's scheme, overriding
// OTEL_EXPORTER_OTLP_LOGS_INSECURE and OTEL_EXPORTER_OTLP_INSECURE.
func WithInsecure() Option {
	return providerOptionFunc(func(c *providerConfig) { c.insecure.by("WithInsecure", true) })
}

// WithHeaders sets the gRPC metadata sent with every export, such as
// {"authorization": "Bearer ..."}, overriding OTEL_EXPORTER_OTLP_LOGS_HEADERS
// and OTEL_EXPORTER_OTLP_HEADERS. Their values never appear in any message
// zaplens writes.
func WithHeaders(headers map[string]string) Option {
	h := maps.Clone(headers)
	return providerOptionFunc(func(c *providerConfig) { c.headers.by("WithHeaders", h) })
}

// WithTLSConfig sets the TLS configuration of the connection, overriding the
// certificate variables. It does not turn TLS on for an http:// endpoint.
func WithTLSConfig(cfg *tls.Config) Option {
	return providerOptionFunc(func(c *providerConfig) { c.tlsConfig.by("WithTLSConfig", cfg) })
}

// WithCompression sets the export compression, "gzip" or "none", overriding
// OTEL_EXPORTER_OTLP_LOGS_COMPRESSION and OTEL_EXPORTER_OTLP_COMPRESSION.
func WithCompression(name string) Option {
	return providerOptionFunc(func(c *providerConfig) { c.compression.by("WithCompression", name) })
}

// WithOTLPTimeout bounds each attempt of an OTLP export, a request and its
// answer, overriding OTEL_EXPORTER_OTLP_LOGS_TIMEOUT and
// OTEL_EXPORTER_OTLP_TIMEOUT; the default is [DefaultOTLPTimeout]. Retries
// are bounded by [WithRetryMaxElapsed].
func WithOTLPTimeout(d time.Duration) Option {
	return providerOptionFunc(func(c *providerConfig) { c.otlpTimeout.by("WithOTLPTimeout", d) })
}

// WithRetryMaxElapsed bounds how long a batch that failed for a reason a
// retry may cure (the collector down, unavailable, slow) is retried, with
// the OTLP spec's backoff: no attempt starts later than d after the first.
// It overrides ZAPLENS_RETRY_MAX_ELAPSED; the default is
// [DefaultRetryMaxElapsed]. A batch stops retrying sooner when the queue
// behind it is full: it gives way, its records counted as failed, so that
// newer ones are kept. A flush or Shutdown makes a retrying batch try at
// once, and fail at once if nothing listens.
func WithRetryMaxElapsed(d time.Duration) Option {
	return providerOptionFunc(func(c *providerConfig) { c.retryElapsed.by("WithRetryMaxElapsed", d) })
}

// WithProtocol chooses the OTLP transport, "grpc" (the default) or
// "http/protobuf", overriding OTEL_EXPORTER_OTLP_LOGS_PROTOCOL and
// OTEL_EXPORTER_OTLP_PROTOCOL.
func WithProtocol(protocol string) Option {
	return providerOptionFunc(func(c *providerConfig) { c.protocol.by("WithProtocol", protocol) })
}

// WithQueueSize bounds how many records may wait for export, overriding
// OTEL_BLRP_MAX_QUEUE_SIZE. By default only bytes bound the queue
// ([WithQueueBytes]); a count, when given, bounds it too.
func WithQueueSize(n int) Option {
	return providerOptionFunc(func(c *providerConfig) { c.queueSize.by("WithQueueSize", n) })
}

// WithQueueBytes bounds how many bytes of encoded records may wait for
// export, overriding ZAPLENS_QUEUE_BYTES; the default is
// [DefaultQueueBytes]. Memory is taken as records arrive, not at start.
// With the spool on ([WithSpool]), at most two requests' worth
// ([WithRequestBytes]) wait in memory: the rest waits in the spool's
// files, which hold every record already.
func WithQueueBytes(n int) Option {
	return providerOptionFunc(func(c *providerConfig) { c.queueBytes.by("WithQueueBytes", n) })
}

// WithRequestBytes bounds the size of one export request, overriding
// ZAPLENS_REQUEST_BYTES; the default is [DefaultRequestBytes], under a
// Collector's default 4 MiB gRPC limit. A record too large for any request
// has its longest values cut to fit, and is counted in [Stats].Cut.
func WithRequestBytes(n int) Option {
	return providerOptionFunc(func(c *providerConfig) { c.requestBytes.by("WithRequestBytes", n) })
}

// WithBatchSize sets the most records sent in one export, overriding
// OTEL_BLRP_MAX_EXPORT_BATCH_SIZE; the default is [DefaultBatchSize], or a
// quarter of the queue size when one is set, whichever is less. It must not
// exceed the queue size.
func WithBatchSize(n int) Option {
	return providerOptionFunc(func(c *providerConfig) { c.batchSize.by("WithBatchSize", n) })
}

// WithScheduleDelay sets the longest a record waits before its batch is
// sent when batches do not fill, overriding OTEL_BLRP_SCHEDULE_DELAY; the
// default is [DefaultScheduleDelay].
func WithScheduleDelay(d time.Duration) Option {
	return providerOptionFunc(func(c *providerConfig) { c.scheduleDelay.by("WithScheduleDelay", d) })
}

// WithExportTimeout bounds one export by the batch processor, retries
// included, overriding OTEL_BLRP_EXPORT_TIMEOUT. The default for OTLP is
// the retry bound plus one attempt ([WithRetryMaxElapsed] +
// [WithOTLPTimeout]), so that it cuts no retry short; for the console
// exporter it is [DefaultExportTimeout].
func WithExportTimeout(d time.Duration) Option {
	return providerOptionFunc(func(c *providerConfig) { c.exportTimeout.by("WithExportTimeout", d) })
}

// WithBlockOnFull makes a logging call wait, at most d, for room when the
// queue is full, instead of dropping the record at once. A record still
// without room after d is dropped and counted. The default, zero, never
// waits: with a full queue the program's logging does not slow down.
func WithBlockOnFull(d time.Duration) Option {
	return providerOptionFunc(func(c *providerConfig) { c.blockOnFull = d })
}

// WithExporterName chooses the exporter as OTEL_LOGS_EXPORTER does, which it
// overrides: "otlp" (the default), "console" (each request as a line of
// OTLP/JSON on stdout) or "none" (a no-op provider).
func WithExporterName(name string) Option {
	return providerOptionFunc(func(c *providerConfig) { c.exporterName.by("WithExporterName", name) })
}

// WithConsoleWriter sets where the console exporter writes; the default is
// os.Stdout.
func WithConsoleWriter(w io.Writer) Option {
	return providerOptionFunc(func(c *providerConfig) { c.consoleWriter = w })
}

// WithDisabled gives a no-op provider when disabled is true, as
// OTEL_SDK_DISABLED=true does; WithDisabled(false) overrides that variable.
func WithDisabled(disabled bool) Option {
	return providerOptionFunc(func(c *providerConfig) { c.disabled.by("WithDisabled", disabled) })
}

// WithServiceName sets the service.name resource attribute, overriding
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func WithServiceName(name string) Option {
	return providerOptionFunc(func(c *providerConfig) { c.serviceName = name })
}

// WithResourceAttributes adds attributes to the resource, overriding those
// of the same key from the environment and from detection.
func WithResourceAttributes(attrs ...attribute.KeyValue) Option {
	return providerOptionFunc(func(c *providerConfig) { c.resourceAttrs = append(c.resourceAttrs, attrs...) })
}

// WithResource makes res the provider's resource, merged with the
// environment as the OpenTelemetry SDK's providers merge the resource
// they are given: OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME under
// res's attributes, which win, and res's schema URL. Give it the resource
// the program's TracerProvider uses, with its detectors (Kubernetes,
// cloud, container), and logs and traces of the process carry the same
// resource, by which a backend joins them. zaplens's own detection (host,
// process, rank, the unknown_service fallback) is then left out: it would
// make the two differ. [WithServiceName] and [WithResourceAttributes] still
// win over res. A nil res keeps the detection.
//
// A provider of the program's own takes the same resource with sdk/log's
// WithResource.
func WithResource(res *resource.Resource) Option {
	return providerOptionFunc(func(c *providerConfig) { c.resource = res })
}

// WithRedactKeys sends the value of every record attribute whose key is
// one of keys, ignoring case, as the string "[redacted]", whatever its
// type: at any depth (the entries of maps, in attributes and in a map
// body, and of maps in slices, and inside the JSON text of values nested
// past the bridge's depth bound), in what the bridge sends, its span
// events included, and in what other code emits through the provider's
// loggers alike. Keys are whole keys, not parts: "token" does not match
// "token_count"; but the keys zap derives from a key ("tokenVerbose",
// "tokenCauses", "tokenError") carry its text and are redacted with it,
// and "error" redacts zap.Error's exception.message. Later calls add
// keys. Without it nothing is compared, and the logging call costs what it
// did.
//
// It acts on what this provider sends, not on the base core of a
// zaplens.NewTee: that is the program's own, and prints what it is given. A
// provider of the program's own redacts with an sdk/log Processor
// registered before its exporting one; docs/opentelemetry.md has one that
// sends the same bytes.
func WithRedactKeys(keys ...string) Option {
	keys = append([]string(nil), keys...)
	return providerOptionFunc(func(c *providerConfig) { c.redactKeys = append(c.redactKeys, keys...) })
}

// WithAttributeCountLimit sets the most attributes a record keeps, overriding
// OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT; the SDK's default is 128.
func WithAttributeCountLimit(n int) Option {
	return providerOptionFunc(func(c *providerConfig) { c.attrCount.by("WithAttributeCountLimit", n) })
}

// WithRecordUID adds to every record the semantic conventions' attribute
// log.record.uid, an id unique to the record (a ULID), overriding
// ZAPLENS_RECORD_UID. A record sent twice keeps its id, so a backend or
// the Collector can drop the copy: the at most one request a SIGKILL makes
// the spool send again. It is off by default: it adds 44 bytes to each
// record on the wire and in the queue (docs/delivery.md has its cost).
func WithRecordUID(on bool) Option {
	return providerOptionFunc(func(c *providerConfig) { c.recordUID.by("WithRecordUID", on) })
}

// WithAttributeValueLengthLimit sets the longest string attribute value a
// record keeps, overriding OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT; the
// SDK's default is no limit.
func WithAttributeValueLengthLimit(n int) Option {
	return providerOptionFunc(func(c *providerConfig) { c.attrValueLen.by("WithAttributeValueLengthLimit", n) })
}

// WithLossReport calls report, from its own goroutine, once per interval in
// which records were dropped or failed, and once at Shutdown if any were
// not delivered over the provider's life. It replaces the default line on
// stderr; a nil report keeps the line and sets only the interval. To send
// the report through a zap logger, use one that is not bridged, or the
// report's own record may be lost the same way. An interval of zero or less
// keeps [DefaultReportInterval].
func WithLossReport(interval time.Duration, report func(Loss)) Option {
	return providerOptionFunc(func(c *providerConfig) {
		if interval > 0 {
			c.reportInterval = interval
		}
		if report != nil {
			c.report = report
		}
	})
}

// WithLossWriter writes the loss report lines to w instead of os.Stderr;
// nil turns the report off (the counts stay readable through Stats).
func WithLossWriter(w io.Writer) Option {
	return providerOptionFunc(func(c *providerConfig) { c.reportWriter, c.reportOff = w, w == nil })
}

// WithMeterProvider records the pipeline's metrics with mp, as
// OTEL_GO_X_OBSERVABILITY=true does with the global MeterProvider: the
// seven the OpenTelemetry SDK's log pipeline records, under the same
// names, units and attributes (the README lists them). It needs no
// variable; a nil mp leaves the choice to it.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return providerOptionFunc(func(c *providerConfig) { c.meterProvider = mp })
}
