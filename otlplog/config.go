package otlplog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/zaplens/zaplens/internal/declarative"
	"github.com/zaplens/zaplens/internal/transport"
)

// The declarative configuration: a file named by OTEL_CONFIG_FILE, read
// with otelconf's parser, so that zaplens reads the very file the
// program's other providers are built from (otelconf.NewSDK), variable
// substitution included. The parser is registered by importing
// otlplog/configfile (configFileImport), which copies what zaplens reads
// into declarative's types: otelconf links the SDK's trace and metric
// exporters, which a program that does not read the file should not pay
// for. Only the logger_provider and resource sections concern zaplens;
// what they ask that zaplens's one pipeline cannot be is refused with the
// path of the setting, rather than half done.

// configFileVar names the configuration file.
const configFileVar = "OTEL_CONFIG_FILE"

// configFileImport is the package that registers the file's parser.
const configFileImport = "github.com/zaplens/zaplens/otlplog/configfile"

// configFileSet tells whether OTEL_CONFIG_FILE names a file.
func configFileSet() bool { return strings.TrimSpace(os.Getenv(configFileVar)) != "" }

// fileConfig is what the file says of the provider.
type fileConfig struct {
	disabled bool // disabled: true, or no logger_provider
	resource *resource.Resource
}

// applyConfigFile reads the file OTEL_CONFIG_FILE names, if any, into the
// settings no option set: the file replaces the variables (variable.file),
// and options win over the file. Its errors name the file and the setting.
func (c *providerConfig) applyConfigFile(ctx context.Context) (*fileConfig, error) {
	path := strings.TrimSpace(os.Getenv(configFileVar))
	if path == "" {
		return nil, nil
	}
	parse := declarative.Registered()
	if parse == nil {
		// The user asked for the file's configuration: the variables it
		// replaces are not a fallback.
		return nil, fmt.Errorf("%s=%s: no parser of the file is linked in: import _ %q", configFileVar, path, configFileImport)
	}
	if set := replacedVariables(); len(set) > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%s replaces %s: not read (the file may read a variable as ${NAME})",
			configFileVar, strings.Join(set, ", ")))
	}
	b, err := readPEMFile(path) // a regular file, bounded, as a certificate is
	if err != nil {
		return nil, fmt.Errorf("%s: %w", configFileVar, err)
	}
	cfg, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", configFileVar, path, err)
	}
	f := &fileConfig{}
	if err := f.apply(ctx, c, cfg); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", configFileVar, path, err)
	}
	return f, nil
}

func (f *fileConfig) apply(ctx context.Context, c *providerConfig, cfg *declarative.Config) error {
	if cfg.Disabled {
		f.disabled = true
		return nil
	}
	lp := cfg.LoggerProvider
	if lp == nil {
		// As otelconf.NewSDK: no logger_provider, no logs.
		f.disabled = true
		return nil
	}
	if err := f.applyProcessors(c, lp.Processors); err != nil {
		return err
	}
	f.applyLimits(c, cfg.AttributeLimits, lp.Limits)
	res, err := fileResource(ctx, cfg.Resource)
	if err != nil {
		return err
	}
	f.resource = res
	return nil
}

func (f *fileConfig) applyProcessors(c *providerConfig, procs []declarative.Processor) error {
	switch {
	case len(procs) == 0:
		return errors.New("logger_provider.processors: none given; zaplens runs one batch processor")
	case len(procs) > 1:
		return fmt.Errorf("logger_provider.processors[1]: zaplens runs one processor, a batch one; this file gives %d", len(procs))
	}
	p := procs[0]
	const at = "logger_provider.processors[0]"
	switch {
	case p.Simple:
		return errors.New(at + ".simple: not supported; zaplens exports in batches off the logging call: use batch")
	case p.Batch == nil:
		return errors.New(at + ": no batch processor; zaplens runs one batch processor")
	}
	b := p.Batch
	fileInt(&c.queueSize, at+".batch.max_queue_size", b.MaxQueueSize)
	fileInt(&c.batchSize, at+".batch.max_export_batch_size", b.MaxExportBatchSize)
	if err := errors.Join(fileMillis(&c.scheduleDelay, at+".batch.schedule_delay", b.ScheduleDelay),
		fileMillis(&c.exportTimeout, at+".batch.export_timeout", b.ExportTimeout)); err != nil {
		return err
	}
	return f.applyExporter(c, at+".batch.exporter", b.Exporter)
}

// byFile gives s the file's value v, from its key at. The resolver
// checks it as an option's and names it by from: the file is named there
// too, as it is in the file's own errors.
func byFile[T any](s *setting[T], at string, v T) { s.by(configFileVar+"'s "+at, v) }

// fileInt gives s the file's value v, if any and no option gave s one,
// named by its key at.
func fileInt(s *setting[int], at string, v *int) {
	if v != nil && !s.set {
		byFile(s, at, *v)
	}
}

// fileMillis is fileInt for a duration in milliseconds. Zero is "no
// limit" in the file; zaplens keeps a bound on every wait, so zero keeps
// the default, as otelconf does for the exporter's.
func fileMillis(s *setting[time.Duration], at string, ms *int) error {
	switch {
	case ms == nil || *ms <= 0 || s.set:
	case int64(*ms) > maxMillis:
		return fmt.Errorf("%s(%d): %s", at, *ms, durationOverflow)
	default:
		byFile(s, at, time.Duration(*ms)*time.Millisecond)
	}
	return nil
}

func (f *fileConfig) applyExporter(c *providerConfig, at string, e declarative.Exporter) error {
	n := 0
	for _, set := range []bool{e.Console, e.OTLPGrpc != nil, e.OTLPHttp != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return errors.New(at + ": no exporter zaplens can run; it runs otlp_grpc, otlp_http or console")
	case n > 1:
		return errors.New(at + ": more than one exporter; zaplens runs one")
	}
	if c.exporterName.set {
		return nil // an option chose the exporter: the file's is not used
	}
	if e.Console {
		byFile(&c.exporterName, at+".console", "console")
		return nil
	}
	if g := e.OTLPGrpc; g != nil {
		at += ".otlp_grpc"
		return f.applyOTLP(c, at, string(transport.GRPC), g)
	}
	h := e.OTLPHttp
	at += ".otlp_http"
	if h.Encoding != nil && *h.Encoding != "protobuf" {
		return fmt.Errorf("%s.encoding: %q is not supported; use protobuf, which every collector accepts", at, *h.Encoding)
	}
	return f.applyOTLP(c, at, string(transport.HTTPProtobuf), h)
}

// applyOTLP takes the OTLP exporter at. Its headers are checked, as an
// option's, by the protocol resolved (readHeaders).
func (f *fileConfig) applyOTLP(c *providerConfig, at, protocol string, o *declarative.OTLP) error {
	byFile(&c.exporterName, at, "otlp")
	if !c.protocol.set {
		byFile(&c.protocol, at, protocol)
	}
	if o.Endpoint != nil && !c.endpoint.set {
		ep := strings.TrimSpace(*o.Endpoint)
		// The file's insecure (gRPC's only) applies to an endpoint without scheme only.
		if o.TLS.Insecure != nil && *o.TLS.Insecure && !strings.Contains(ep, "://") {
			ep = "http://" + ep
		}
		if _, err := transport.ParseEndpoint(ep, transport.Protocol(c.protocol.value), false); err != nil {
			return fmt.Errorf("%s.endpoint: %w", at, err)
		}
		byFile(&c.endpoint, at+".endpoint", ep)
	}
	if o.Compression != nil && !c.compression.set {
		if !compressionName(*o.Compression) {
			return fmt.Errorf("%s.compression: %q is not supported; want gzip or none", at, *o.Compression)
		}
		byFile(&c.compression, at+".compression", *o.Compression)
	}
	if err := fileMillis(&c.otlpTimeout, at+".timeout", o.Timeout); err != nil {
		return err
	}
	if (o.Headers != nil || o.HeadersList != nil) && !c.headers.set {
		h, err := fileHeaders(at, o.Headers, o.HeadersList)
		if err != nil {
			return err
		}
		byFile(&c.headers, at+".headers", h)
	}
	if t := o.TLS; !c.tlsConfig.set && (t.CAFile != nil || t.CertFile != nil || t.KeyFile != nil) {
		cfg, err := fileTLS(at+".tls", t)
		if err != nil {
			return err
		}
		byFile(&c.tlsConfig, at+".tls", cfg)
	}
	return nil
}

// fileHeaders is headers_list, then headers, which win, as otelconf takes
// them; a header whose value is null is left out.
func fileHeaders(at string, headers []declarative.Header, list *string) (map[string]string, error) {
	h := map[string]string{}
	if list != nil {
		pairs, err := parsePairs(at+".headers_list", *list, headerValue)
		if err != nil {
			return nil, err
		}
		maps.Copy(h, pairs)
	}
	for i, kv := range headers {
		if kv.Name == "" {
			return nil, fmt.Errorf("%s.headers[%d]: no name", at, i)
		}
		if kv.Value != nil {
			h[kv.Name] = *kv.Value
		}
	}
	return h, nil
}

func fileTLS(at string, t declarative.TLS) (*tls.Config, error) {
	var cfg tls.Config
	if t.CAFile != nil {
		pool, err := loadCertPool(*t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%s.ca_file: %w", at, err)
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.CertFile != nil && t.KeyFile != nil:
		pair, err := loadKeyPair(*t.CertFile, *t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%s.cert_file and key_file: %w", at, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.CertFile != nil:
		return nil, errors.New(at + ".key_file: missing; cert_file needs it")
	case t.KeyFile != nil:
		return nil, errors.New(at + ".cert_file: missing; key_file needs it")
	}
	return &cfg, nil
}

// applyLimits takes logger_provider.limits, or else the general
// attribute_limits, as otelconf gives them to sdk/log.
func (f *fileConfig) applyLimits(c *providerConfig, general, l *declarative.Limits) {
	var count, length *int
	countAt, lengthAt := "attribute_limits", "attribute_limits"
	if general != nil {
		count, length = general.AttributeCountLimit, general.AttributeValueLengthLimit
	}
	if l != nil {
		if l.AttributeCountLimit != nil {
			count, countAt = l.AttributeCountLimit, "logger_provider.limits"
		}
		if l.AttributeValueLengthLimit != nil {
			length, lengthAt = l.AttributeValueLengthLimit, "logger_provider.limits"
		}
	}
	fileInt(&c.attrCount, countAt+".attribute_count_limit", count)
	fileInt(&c.attrValueLen, lengthAt+".attribute_value_length_limit", length)
}

// fileResource builds the resource section as otelconf builds it for the
// program's other providers, but the environment: the SDK's attributes,
// under attributes_list, under attributes, with the schema URL given.
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES go under it as under any
// given resource (givenResource), read the one way that quotes no secret
// and half-reads no bad value; so does the unknown_service fallback
// (providerConfig.serviceFallback), which the SDK's default resource has.
func fileResource(ctx context.Context, r *declarative.Resource) (*resource.Resource, error) {
	sdk, err := resource.New(ctx, resource.WithTelemetrySDK())
	if err != nil || r == nil {
		return sdk, err
	}
	var list []attribute.KeyValue
	if r.AttributesList != nil {
		pairs, err := parsePairs("resource.attributes_list", *r.AttributesList, resourceValue)
		if err != nil {
			return nil, err
		}
		for k, v := range pairs {
			list = append(list, attribute.String(k, v))
		}
	}
	attrs := make([]attribute.KeyValue, 0, len(r.Attributes))
	for i, a := range r.Attributes {
		kv, err := fileAttribute(a)
		if err != nil {
			return nil, fmt.Errorf("resource.attributes[%d] (%s): %w", i, printable(a.Name), err)
		}
		attrs = append(attrs, kv)
	}
	schema := ""
	if r.SchemaURL != nil {
		schema = *r.SchemaURL
	}
	return resource.New(ctx,
		resource.WithAttributes(sdk.Attributes()...), // without its schema URL, which the file's replaces
		resource.WithAttributes(list...),
		resource.WithAttributes(attrs...),
		resource.WithSchemaURL(schema))
}

// fileAttribute converts a resource attribute of the file: its value as
// otelconf converts it, and the arrays its type names as arrays.
func fileAttribute(a declarative.Attribute) (attribute.KeyValue, error) {
	vs, isArray := a.Value.([]any)
	if !isArray {
		switch v := a.Value.(type) {
		case bool:
			return attribute.Bool(a.Name, v), nil
		case int:
			return attribute.Int(a.Name, v), nil
		case float64:
			return attribute.Float64(a.Name, v), nil
		case string:
			return attribute.String(a.Name, v), nil
		}
		return attribute.String(a.Name, fmt.Sprint(a.Value)), nil
	}
	t := a.Type
	if t == "" {
		t = "string_array"
	}
	switch t {
	case "bool_array":
		return arrayAttribute(a.Name, t, vs, attribute.BoolSlice)
	case "int_array":
		return arrayAttribute(a.Name, t, vs, attribute.IntSlice)
	case "double_array":
		return arrayAttribute(a.Name, t, vs, attribute.Float64Slice)
	case "string_array":
		return arrayAttribute(a.Name, t, vs, attribute.StringSlice)
	}
	return attribute.KeyValue{}, fmt.Errorf("an array of type %s", t)
}

// arrayAttribute is the file's array vs as the attribute kv makes of a
// []T, or an error if an element is not a T.
func arrayAttribute[T any](name, t string, vs []any, kv func(string, []T) attribute.KeyValue) (attribute.KeyValue, error) {
	out := make([]T, len(vs))
	for i, v := range vs {
		e, ok := v.(T)
		if !ok {
			return attribute.KeyValue{}, fmt.Errorf("an element is not of type %s", t)
		}
		out[i] = e
	}
	return kv(name, out), nil
}
