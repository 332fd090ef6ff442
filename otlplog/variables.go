package otlplog

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zaplens/zaplens/internal/transport"
)

// Every environment variable the pipeline reads is a row of variables,
// which says what it sets, its default and the option that wins over it;
// docs/configuration.md's table says the same (TestVariablesDocumented).
// A new variable is a row here and a row there. The rows are resolved by
// resolve (env.go), option, then variable, then default, the bad-value
// rule in one place (setting.bad); they are read step by step, in the
// table's order within a step.

// A variable is the environment variables of one setting.
type variable struct {
	// names are read in order, the logs-specific one first: the first set
	// gives the value, unless its row reads them otherwise.
	names  []string
	kind   string // what a value is
	def    string // the default
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
	{names: []string{configFileVar}, kind: "path", def: "none", step: stepFile}, // applyConfigFile
	{names: []string{"OTEL_SDK_DISABLED"}, kind: "bool", def: "false", option: "WithDisabled", step: stepSwitch, file: true,
		read: boolVar(func(c *providerConfig) *setting[bool] { return &c.disabled })},
	{names: []string{"OTEL_LOGS_EXPORTER"}, kind: "otlp, console or none", def: "otlp", option: "WithExporterName", step: stepSwitch, file: true,
		read: readExporter},
	{names: []string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}, kind: "grpc or http/protobuf", def: "grpc", option: "WithProtocol", step: stepProtocol, file: true,
		read: readProtocol},
	// The insecure variables apply to an endpoint without a scheme only
	// (target), so they come before it.
	{names: []string{"OTEL_EXPORTER_OTLP_LOGS_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE"}, kind: "bool", def: "false", option: "WithInsecure", step: stepOTLP, file: true,
		read: boolVar(func(c *providerConfig) *setting[bool] { return &c.insecure })},
	{names: []string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}, kind: "URL or host:port", def: DefaultEndpoint, option: "WithEndpoint", step: stepOTLP, file: true,
		read: readEndpoint},
	{names: []string{"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"}, kind: "key=value,...", def: "none", option: "WithHeaders", step: stepOTLP, file: true,
		read: readHeaders},
	{names: caVars, kind: "PEM file", def: "system roots", option: "WithTLSConfig", step: stepOTLP, file: true,
		read: readTLS},
	{names: slices.Concat(clientCertVars, clientKeyVars), kind: "PEM files", def: "none", option: "WithTLSConfig", step: stepOTLP, file: true}, // readTLS
	{names: []string{"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"}, kind: "gzip or none", def: "none", option: "WithCompression", step: stepOTLP, file: true,
		read: readCompression},
	{names: []string{"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"}, kind: "milliseconds", def: "10000", option: "WithOTLPTimeout", step: stepOTLP, file: true,
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.otlpTimeout }, fixed(DefaultOTLPTimeout), 1)},
	{names: []string{"ZAPLENS_RETRY_MAX_ELAPSED"}, kind: "milliseconds", def: "120000", option: "WithRetryMaxElapsed", step: stepOTLP,
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.retryElapsed }, fixed(DefaultRetryMaxElapsed), 1)},
	{names: []string{"OTEL_BLRP_MAX_QUEUE_SIZE"}, kind: "records", def: "none", option: "WithQueueSize", step: stepBatch, file: true,
		read: intVar(func(c *providerConfig) *setting[int] { return &c.queueSize }, 0, 1)},
	{names: []string{"ZAPLENS_QUEUE_BYTES"}, kind: "bytes", def: "25165824", option: "WithQueueBytes", step: stepBatch,
		read: intVar(func(c *providerConfig) *setting[int] { return &c.queueBytes }, DefaultQueueBytes, 1024)},
	{names: []string{"ZAPLENS_REQUEST_BYTES"}, kind: "bytes", def: "3145728", option: "WithRequestBytes", step: stepBatch,
		read: intVar(func(c *providerConfig) *setting[int] { return &c.requestBytes }, DefaultRequestBytes, minRequestBytes)},
	{names: []string{"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE"}, kind: "records", def: "8192", option: "WithBatchSize", step: stepBatch, file: true,
		read: intVar(func(c *providerConfig) *setting[int] { return &c.batchSize }, DefaultBatchSize, 1)},
	{names: []string{"OTEL_BLRP_SCHEDULE_DELAY"}, kind: "milliseconds", def: "1000", option: "WithScheduleDelay", step: stepBatch, file: true,
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.scheduleDelay }, fixed(DefaultScheduleDelay), 1)},
	{names: []string{"OTEL_BLRP_EXPORT_TIMEOUT"}, kind: "milliseconds", def: "130000", option: "WithExportTimeout", step: stepBatch, file: true,
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.exportTimeout }, (*providerConfig).exportBound, 1)},
	{names: []string{"OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT"}, kind: "count", def: "128", option: "WithAttributeCountLimit", step: stepLimits, file: true,
		read: intVar(func(c *providerConfig) *setting[int] { return &c.attrCount }, -1, 0)},
	{names: []string{"OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT"}, kind: "bytes", def: "no limit", option: "WithAttributeValueLengthLimit", step: stepLimits, file: true,
		read: intVar(func(c *providerConfig) *setting[int] { return &c.attrValueLen }, -1, 0)},
	{names: []string{"ZAPLENS_RECORD_UID"}, kind: "bool", def: "false", option: "WithRecordUID", step: stepLimits,
		read: boolVar(func(c *providerConfig) *setting[bool] { return &c.recordUID })},
	// The SDK's resource reads both too (fromEnv); the file does not
	// replace them, so that the logs' resource is the one the program's
	// other providers get from it (fileResource).
	{names: []string{"OTEL_SERVICE_NAME"}, kind: "string", def: "unknown_service:<program>", option: "WithServiceName", step: stepResource},
	{names: []string{"OTEL_RESOURCE_ATTRIBUTES"}, kind: "key=value,...", def: "none", option: "WithResourceAttributes", step: stepResource,
		read: func(c *providerConfig, _ *variable) error { return c.checkResourceEnv() }},
	{names: []string{"ZAPLENS_SPOOL_DIR"}, kind: "path", def: "off", option: "WithSpool", step: stepSpool,
		read: stringVar(func(c *providerConfig) *setting[string] { return &c.spool.dir })},
	{names: []string{"ZAPLENS_SPOOL_BYTES"}, kind: "bytes", def: "134217728", option: "WithSpoolBytes", step: stepSpoolFiles,
		read: intVar(func(c *providerConfig) *setting[int] { return &c.spool.bytes }, DefaultSpoolBytes, minSpoolBytes)},
	{names: []string{"ZAPLENS_SPOOL_SYNC"}, kind: "milliseconds", def: "0", option: "WithSpoolSync", step: stepSpoolFiles,
		read: millisVar(func(c *providerConfig) *setting[time.Duration] { return &c.spool.sync }, fixed[time.Duration](0), 0)},
	{names: observabilityVars, kind: "bool", def: "off", option: "WithMeterProvider", step: stepMetrics}, // observabilityEnabled
}

// The certificate variables make one TLS configuration (envTLS): the CA
// bundle to trust, and the client certificate and key, which come
// together.
var (
	caVars         = []string{"OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"}
	clientCertVars = []string{"OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"}
	clientKeyVars  = []string{"OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY"}
)

// observabilityVars turn the metrics on, the older name second, as the
// SDK reads them.
var observabilityVars = []string{"OTEL_GO_X_OBSERVABILITY", "OTEL_GO_X_SELF_OBSERVABILITY"}

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
		if raw != "none" && raw != "gzip" {
			return "", fmt.Errorf("%s=%q: want gzip or none", name, raw)
		}
		return raw, nil
	}
	check := func(s *setting[string]) error {
		if s.value != "" && s.value != "none" && s.value != "gzip" {
			return fmt.Errorf("%s: want gzip or none", said(s))
		}
		return nil
	}
	return resolve(&c.compression, v, "", parse, check)
}
