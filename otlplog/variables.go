package otlplog

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zaplens/zaplens/internal/confval"
	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/transport"
)

// Every environment variable the pipeline reads is a row of variables,
// which says what it does, what it sets, its default and the option that
// wins over it; docs/configuration.md's table of them is made from it
// (go test -run TestVariablesDocumented ./otlplog -update). A new
// variable is a row here. The rows are resolved by resolve (env.go):
// option, then variable, then default, the bad-value rule in one place
// (setting.bad); they are read step by step, in the table's order within
// a step.

// A variable is the environment variables of one setting.
type variable struct {
	// names are read in order, the logs-specific one first: the first set
	// gives the value, unless its row reads them otherwise.
	names  []string
	doc    string // what it does, in docs/configuration.md's words (Markdown)
	def    string // its default, likewise
	option string // the option that wins over it; "" if none
	step   step   // when it is read
	// file marks the SDK's variables that OTEL_CONFIG_FILE replaces: with
	// a file they are not read (the declarative-configuration spec).
	file bool
	// read resolves the row into the field it sets; nil for a variable read
	// where it is used (the comment on its row says where).
	read func(c *providerConfig, v *variable) error
}

// step is when a variable is read. A step not needed is not read: a
// provider that is off reads nothing more, one that does not export over
// OTLP ignores the OTLP variables, one without a spool the spool's, so
// that a leftover bad value of a setting that is not used is not even
// warned of.
type step int

const (
	stepFile       step = iota // first: the file replaces variables (config.go)
	stepSwitch                 // whether there is a pipeline, and its exporter
	stepProtocol               // OTLP's protocol, by which the endpoint and headers are read
	stepOTLP                   // OTLP's, when the protocol is one zaplens speaks
	stepBatch                  // the queue and its batches
	stepLimits                 // what a record keeps
	stepResource               // the resource (resource.go)
	stepSpool                  // the spool's directory, when the pipeline is built (spool.go)
	stepSpoolFiles             // the spool's files, when there is a directory
	stepMetrics                // when the pipeline is built (metrics.go)
)

// variables is every variable the pipeline reads, in the order read.
var variables = []variable{
	{
		names: []string{configFileVar}, step: stepFile, // applyConfigFile
		doc: "a declarative configuration file, whose `logger_provider` and `resource` replace the SDK's variables below ([opentelemetry.md](opentelemetry.md#declarative-configuration-otel_config_file)); read only by a program that imports `_ \"github.com/zaplens/zaplens/otlplog/configfile\"`, and without that import an error naming it",
		def: "none",
	},
	{
		names: []string{"OTEL_SDK_DISABLED"}, option: "WithDisabled", step: stepSwitch, file: true,
		doc:  "`true`: no-op provider (`true`/`false` only)",
		def:  "`false`",
		read: boolVar(func(c *providerConfig) *setting[bool] { return &c.disabled }),
	},
	{
		names: []string{"OTEL_LOGS_EXPORTER"}, option: "WithExporterName", step: stepSwitch, file: true,
		doc:  "`otlp`, `console` (OTLP/JSON lines on stdout) or `none`",
		def:  "`otlp`",
		read: readExporter,
	},
	{
		names: []string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}, option: "WithProtocol", step: stepProtocol, file: true,
		doc:  "`grpc` or `http/protobuf`; `http/json` is refused with a word on what to use",
		def:  "`grpc`",
		read: readProtocol,
	},
	{
		// Before the endpoint, which it applies to when it has no scheme (target).
		names: []string{"OTEL_EXPORTER_OTLP_LOGS_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE"}, option: "WithInsecure", step: stepOTLP, file: true,
		doc:  "`true`: no TLS for a scheme-less endpoint (a scheme decides on its own)",
		def:  "`false`",
		read: boolVar(func(c *providerConfig) *setting[bool] { return &c.insecure }),
	},
	{
		names: []string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}, option: "WithEndpoint", step: stepOTLP, file: true,
		doc:  "`https://host:port`, `http://host:port` (no TLS) or `host:port` (TLS unless insecure); a URL without a port takes its scheme's, 443 for TLS and 80 without (as hosted backends publish `https://otlp.example.com/otlp`); 4317 (gRPC) and 4318 (HTTP) are the default endpoint's. Over HTTP the generic variable gets `/v1/logs` added, the `LOGS_` one is used as given (an option's URL without a path gets `/v1/logs`). Credentials, a query, an empty port or an unbracketed IPv6 address make the value bad: ignored with a warning",
		def:  "`" + DefaultEndpoint + "`, or `" + DefaultHTTPEndpoint + "` for HTTP",
		read: readEndpoint,
	},
	{
		names: []string{"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"}, option: "WithHeaders", step: stepOTLP, file: true,
		doc:  "`key=value,...`, values percent-encoded, e.g. `authorization=Bearer%20<token>`, decoded then trimmed as otlploggrpc reads them (an encoded newline at the end goes; `TestHeadersMatchSDK`); keys by the transport's rules (gRPC: lowercase letters, digits, `-_.`, not `grpc-`; HTTP: a token), one header whatever their case; values printable ASCII",
		def:  "none",
		read: readHeaders,
	},
	{
		names: caVars, option: "WithTLSConfig", step: stepOTLP, file: true,
		doc:  "PEM file of the CA(s) to trust; a regular file of at most 1 MiB, read once",
		def:  "system roots",
		read: readTLS,
	},
	{
		names: []string{clientCertVars[0], clientCertVars[1], clientKeyVars[0], clientKeyVars[1]}, option: "WithTLSConfig", step: stepOTLP, file: true, // readTLS
		doc: "PEM client certificate and key for mutual TLS, both or neither",
		def: "none",
	},
	{
		names: []string{"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"}, option: "WithCompression", step: stepOTLP, file: true,
		doc:  "`gzip` or `none`",
		def:  "`none`",
		read: readCompression,
	},
	{
		names: []string{"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"}, option: "WithOTLPTimeout", step: stepOTLP, file: true,
		doc:  "each attempt of an export, a request and its answer, in ms (at least 1); retries have a bound of their own (next row, and [delivery](delivery.md#riding-out-an-outage))",
		def:  millisDef(DefaultOTLPTimeout),
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.otlpTimeout }, fixed(DefaultOTLPTimeout), 1),
	},
	{
		names: []string{"ZAPLENS_RETRY_MAX_ELAPSED"}, option: "WithRetryMaxElapsed", step: stepOTLP,
		doc:  "how long a batch is retried after its first attempt failed, in ms (at least 1): no attempt starts later. A batch stops sooner when the queue behind it is full: its records, the oldest, give way, counted failed",
		def:  fmt.Sprintf("%s (%d min)", millisDef(DefaultRetryMaxElapsed), DefaultRetryMaxElapsed/time.Minute),
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.retryElapsed }, fixed(DefaultRetryMaxElapsed), 1),
	},
	{
		names: []string{"OTEL_BLRP_MAX_QUEUE_SIZE"}, option: "WithQueueSize", step: stepBatch, file: true,
		doc:  "when set, also a bound in records (waiting or in an export; with the spool on, waiting in memory)",
		def:  "none",
		read: intVar(func(c *providerConfig) *setting[int] { return &c.queueSize }, 0, 1),
	},
	{
		names: []string{"ZAPLENS_QUEUE_BYTES"}, option: "WithQueueBytes", step: stepBatch,
		doc:  fmt.Sprintf("bytes of encoded records that may wait for export (at least %d); with the spool on, at most two requests' worth wait in memory, the rest in the spool's files", minQueueBytes),
		def:  fmt.Sprintf("**%d** (%d MiB)", DefaultQueueBytes, DefaultQueueBytes>>20),
		read: intVar(func(c *providerConfig) *setting[int] { return &c.queueBytes }, DefaultQueueBytes, minQueueBytes),
	},
	{
		names: []string{"ZAPLENS_REQUEST_BYTES"}, option: "WithRequestBytes", step: stepBatch,
		doc:  fmt.Sprintf("most bytes in one export request (at least %d)", minRequestBytes),
		def:  fmt.Sprintf("**%d** (%d MiB)", DefaultRequestBytes, DefaultRequestBytes>>20),
		read: intVar(func(c *providerConfig) *setting[int] { return &c.requestBytes }, DefaultRequestBytes, minRequestBytes),
	},
	{
		names: []string{"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE"}, option: "WithBatchSize", step: stepBatch, file: true,
		doc:  "most records per export; must not exceed the record bound, when set",
		def:  "**" + strconv.Itoa(DefaultBatchSize) + "**, or a quarter of the record bound when one is set and that is less (SDK: 512)",
		read: intVar(func(c *providerConfig) *setting[int] { return &c.batchSize }, DefaultBatchSize, 1),
	},
	{
		names: []string{"OTEL_BLRP_SCHEDULE_DELAY"}, option: "WithScheduleDelay", step: stepBatch, file: true,
		doc:  "longest wait before a batch that has not filled is sent, in ms",
		def:  millisDef(DefaultScheduleDelay),
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.scheduleDelay }, fixed(DefaultScheduleDelay), 1),
	},
	{
		// After the OTLP step: its default is the retry bound and one attempt.
		names: []string{"OTEL_BLRP_EXPORT_TIMEOUT"}, option: "WithExportTimeout", step: stepBatch, file: true,
		doc:  "one export by the pipeline, retries included, in ms",
		def:  fmt.Sprintf("over OTLP the retry bound plus one attempt (%s), so that it cuts no retry short; %s for `console`", millisDef(DefaultRetryMaxElapsed+DefaultOTLPTimeout), millisDef(DefaultExportTimeout)),
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.exportTimeout }, (*providerConfig).exportBound, 1),
	},
	{
		names: []string{"OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT"}, option: "WithAttributeCountLimit", step: stepLimits, file: true,
		doc:  "most attributes per record",
		def:  strconv.Itoa(otlpwire.DefaultLimits.AttributeCount),
		read: intVar(func(c *providerConfig) *setting[int] { return &c.attrCount }, -1, 0),
	},
	{
		names: []string{"OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT"}, option: "WithAttributeValueLengthLimit", step: stepLimits, file: true,
		doc:  "longest string value kept",
		def:  "no limit",
		read: intVar(func(c *providerConfig) *setting[int] { return &c.attrValueLen }, -1, 0),
	},
	{
		names: []string{"ZAPLENS_RECORD_UID"}, option: "WithRecordUID", step: stepLimits,
		doc:  "`true`: every record carries `log.record.uid`, a ULID of its own, so that a backend can drop the copy a SIGKILL may make the spool send ([delivery](delivery.md#an-id-to-deduplicate-on))",
		def:  "`false`",
		read: boolVar(func(c *providerConfig) *setting[bool] { return &c.recordUID }),
	},
	// The program's other providers read the next two into their resource
	// (sdk/resource's WithFromEnv), even with a file: the file does not
	// replace them, so that the logs' resource is the one those providers
	// get from it (configfile's fileResource). Here they are read as
	// WithFromEnv reads them (envAttributes), not by it.
	{
		names: []string{"OTEL_SERVICE_NAME"}, option: "WithServiceName", step: stepResource, // envAttributes
		doc: "`service.name`",
		def: "`unknown_service:<program>`",
	},
	{
		names: []string{"OTEL_RESOURCE_ATTRIBUTES"}, option: "WithResourceAttributes", step: stepResource,
		doc:  "more resource attributes, `key=value,...`, values percent-encoded; a bad escape is refused, by position and key",
		def:  "none",
		read: readResourceAttributes,
	},
	{
		names: []string{"ZAPLENS_SPOOL_DIR"}, option: "WithSpool", step: stepSpool,
		doc:  "the crash-safe spool's directory (see [the spool](spool.md))",
		def:  "off",
		read: stringVar(func(c *providerConfig) *setting[string] { return &c.spool.dir }),
	},
	{
		names: []string{"ZAPLENS_SPOOL_BYTES"}, option: "WithSpoolBytes", step: stepSpoolFiles,
		doc:  "the spool files of one process, at most",
		def:  fmt.Sprintf("%d (%d MiB)", DefaultSpoolBytes, DefaultSpoolBytes>>20),
		read: intVar(func(c *providerConfig) *setting[int] { return &c.spool.bytes }, DefaultSpoolBytes, minSpoolBytes),
	},
	{
		names: []string{"ZAPLENS_SPOOL_SYNC"}, option: "WithSpoolSync", step: stepSpoolFiles,
		doc:  "how often the spool is written to the disk, in ms (0: never)",
		def:  "0",
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.spool.sync }, fixed[time.Duration](0), 0),
	},
	{
		names: []string{"OTEL_GO_X_OBSERVABILITY", "OTEL_GO_X_SELF_OBSERVABILITY"}, option: "WithMeterProvider", step: stepMetrics, // metricsProvider
		doc:  "`true` (any case): the pipeline's metrics through the global `MeterProvider` ([metrics](delivery.md#metrics-about-the-pipeline)); the second is its older name; a value other than `true` or `false` is ignored with a warning",
		def:  "off",
		read: boolVar(func(c *providerConfig) *setting[bool] { return &c.observability }),
	},
}

// millisDef writes a default duration in the table, in milliseconds, from
// its constant, so that docs/configuration.md follows the code.
func millisDef(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// minQueueBytes keeps the queue large enough for a record or two.
const minQueueBytes = 1024

// The certificate variables make one TLS configuration (envTLS): the CA
// bundle to trust, and the client certificate and key, which come
// together.
var (
	caVars         = []string{"OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"}
	clientCertVars = []string{"OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"}
	clientKeyVars  = []string{"OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY"}
)

// readStep resolves the rows of step s, in order, and returns what they
// found wrong, for triage.
func (c *providerConfig) readStep(s step) error {
	var errs []error
	for i := range variables {
		if v := &variables[i]; v.step == s && v.read != nil {
			errs = append(errs, v.read(c, v))
		}
	}
	return errors.Join(errs...)
}

// getenv is the value of the variable name of v's row, "" when
// OTEL_CONFIG_FILE replaces it.
func (v *variable) getenv(name string) string {
	if v.file && configFileSet() {
		return ""
	}
	return os.Getenv(name)
}

// lookup returns the first non-empty variable of names, and its name for
// messages; "" if there is none.
func (v *variable) lookup(names ...string) (value, name string) {
	for _, k := range names {
		if s := v.getenv(k); s != "" {
			return s, k
		}
	}
	return "", ""
}

// replacedVariables lists the variables set that OTEL_CONFIG_FILE
// replaces, sorted.
func replacedVariables() []string {
	var set []string
	for _, v := range variables {
		for _, k := range v.names {
			if v.file && os.Getenv(k) != "" {
				set = append(set, k)
			}
		}
	}
	slices.Sort(set)
	return set
}

// fixed is a default that depends on nothing else.
func fixed[T any](def T) func(*providerConfig) T { return func(*providerConfig) T { return def } }

// boolVar resolves a bool field: only true and false, in any case, are
// accepted, so that "1" or "yes" fail loudly rather than mean false.
func boolVar(field func(*providerConfig) *setting[bool]) func(*providerConfig, *variable) error {
	return func(c *providerConfig, v *variable) error {
		return resolve(field(c), v, false, parseBool, nil)
	}
}

// stringVar resolves a string field whose value any string is.
func stringVar(field func(*providerConfig) *setting[string]) func(*providerConfig, *variable) error {
	return func(c *providerConfig, v *variable) error {
		return resolve(field(c), v, "", func(_, raw string) (string, error) { return raw, nil }, nil)
	}
}

// intVar resolves a count of at least least; def is its default.
func intVar(field func(*providerConfig) *setting[int], def, least int) func(*providerConfig, *variable) error {
	return func(c *providerConfig, v *variable) error {
		return resolve(field(c), v, def, parseCount(least), atLeast(least))
	}
}

// millisVar resolves a duration, given in milliseconds, of at least least
// of them; def gives its default, which may depend on settings of earlier
// steps.
func millisVar(field func(*providerConfig) *setting[time.Duration], def func(*providerConfig) time.Duration, least int) func(*providerConfig, *variable) error {
	return func(c *providerConfig, v *variable) error {
		return resolve(field(c), v, def(c), parseMillis(least), atLeastMillis(least))
	}
}

// readExporter resolves the exporter's name, an option's as a variable's.
func readExporter(c *providerConfig, v *variable) error {
	parse := func(name, raw string) (string, error) {
		if n, ok := exporterName(raw); ok {
			return n, nil
		}
		return "", fmt.Errorf("%s=%q: want otlp, console or none (one only)", name, raw) // the spec's variable is a list
	}
	check := func(s *setting[string]) error {
		n, ok := exporterName(s.value)
		if !ok {
			return fmt.Errorf("%s: want otlp, console or none", said(s))
		}
		s.value = n
		return nil
	}
	return resolve(&c.exporterName, v, "otlp", parse, check)
}

// exporterName is name as the exporter is known, and whether it is one.
func exporterName(name string) (string, bool) {
	switch name = strings.ToLower(strings.TrimSpace(name)); name {
	case "", "otlp":
		return "otlp", true
	case "console", "none":
		return name, true
	}
	return "", false
}

// readProtocol resolves OTLP's protocol: grpc or http/protobuf; http/json
// is refused with a word on what to use. A protocol zaplens does not speak
// makes shipping impossible, whoever asked for it: the value is taken as
// it is, and checked after.
func readProtocol(c *providerConfig, v *variable) error {
	trim := func(_, raw string) (string, error) { return strings.TrimSpace(raw), nil }
	_ = resolve(&c.protocol, v, "", trim, nil) // trim never fails
	switch c.protocol.value {
	case "":
		c.protocol.value = string(transport.GRPC)
	case string(transport.GRPC), string(transport.HTTPProtobuf):
	case "http/json":
		return fmt.Errorf("%s: not supported; use grpc or http/protobuf, which every collector accepts", said(&c.protocol))
	default:
		return fmt.Errorf("%s: want grpc or http/protobuf", said(&c.protocol))
	}
	return nil
}

// readEndpoint takes the first endpoint variable whose value parses, else
// the protocol's default endpoint.
func readEndpoint(c *providerConfig, v *variable) error {
	def := DefaultEndpoint
	if c.protocol.value == string(transport.HTTPProtobuf) {
		def = DefaultHTTPEndpoint
	}
	parse := func(name, raw string) (string, error) {
		if _, err := transport.ParseEndpoint(raw, transport.Protocol(c.protocol.value), c.insecure.value); err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return raw, nil
	}
	err := resolveEach(&c.endpoint, v, def, parse, nil) // an option's is checked by target
	if !c.endpoint.set {
		c.endpoint.from = "the default endpoint"
	}
	return err
}

// readHeaders reads the headers variables, the first that parses, as
// otlploggrpc reads them: a signal-specific value that does not parse
// gives way to the general one. Headers an option or the file gave are
// checked by the rules of the transport.
func readHeaders(c *providerConfig, v *variable) error {
	protocol := c.protocol.value
	parse := func(name, raw string) (map[string]string, error) { return parseHeaders(name, raw, protocol) }
	check := func(s *setting[map[string]string]) error {
		h, err := checkHeaders(s.from, s.value, protocol)
		s.value = h
		return err
	}
	return resolveEach(&c.headers, v, map[string]string{}, parse, check)
}

// readTLS builds the TLS configuration from the certificate variables,
// unless an option or the file gave one.
func readTLS(c *providerConfig, v *variable) error {
	if c.tlsConfig.set {
		return nil
	}
	cfg, err := envTLS(v)
	c.tlsConfig.put(cfg)
	return err
}

// readCompression resolves the compression: gzip or none.
func readCompression(c *providerConfig, v *variable) error {
	parse := func(name, raw string) (string, error) {
		if !confval.Compression(raw) {
			return "", fmt.Errorf("%s=%q: want gzip or none", name, raw)
		}
		return raw, nil
	}
	check := func(s *setting[string]) error {
		if s.value != "" && !confval.Compression(s.value) {
			return fmt.Errorf("%s: want gzip or none", said(s))
		}
		return nil
	}
	return resolve(&c.compression, v, "", parse, check)
}
