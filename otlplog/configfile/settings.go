package configfile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/zaplens/zaplens/internal/confval"
	"github.com/zaplens/zaplens/internal/declarative"
	"github.com/zaplens/zaplens/internal/transport"
)

// Only the logger_provider and resource sections concern zaplens; what
// they ask that zaplens's one pipeline cannot be is refused with the path
// of the setting, rather than half done. Every value is read and checked
// here, where only a program that reads the file links the code; the
// pipeline gives the values to the settings no option set (otlplog's
// applyFile), and tells a value's error only then.

// settings turns what the file says into the pipeline's settings.
func settings(ctx context.Context, cfg *declarative.Config) (*declarative.Settings, error) {
	s := &declarative.Settings{}
	lp := cfg.LoggerProvider
	if cfg.Disabled || lp == nil {
		// As otelconf.NewSDK: no logger_provider, no logs.
		s.Disabled = true
		return s, nil
	}
	if err := batch(s, lp.Processors); err != nil {
		return nil, err
	}
	limits(s, cfg.AttributeLimits, lp.Limits)
	s.Resource, s.ResourceErr = fileResource(ctx, cfg.Resource)
	return s, nil
}

// batch takes the one batch processor zaplens runs, and refuses others.
func batch(s *declarative.Settings, procs []declarative.Processor) error {
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
	s.QueueSize = intValue(at+".batch.max_queue_size", b.MaxQueueSize)
	s.BatchSize = intValue(at+".batch.max_export_batch_size", b.MaxExportBatchSize)
	s.ScheduleDelay = millis(at+".batch.schedule_delay", b.ScheduleDelay)
	s.ExportTimeout = millis(at+".batch.export_timeout", b.ExportTimeout)
	s.Exporter = exporterSettings(at+".batch.exporter", b.Exporter)
	return nil
}

// intValue is the file's count v, if any, at its key at; the pipeline
// checks it as an option's.
func intValue(at string, v *int) declarative.Value[int] {
	if v == nil {
		return declarative.Value[int]{}
	}
	return declarative.Value[int]{At: at, V: *v}
}

// millis is a duration in milliseconds. Zero is "no limit" in the file;
// zaplens keeps a bound on every wait, so zero keeps the default, as
// otelconf does for the exporter's.
func millis(at string, ms *int) declarative.Value[time.Duration] {
	switch {
	case ms == nil || *ms <= 0:
		return declarative.Value[time.Duration]{}
	case int64(*ms) > confval.MaxMillis:
		return declarative.Value[time.Duration]{At: at, Err: fmt.Errorf("%s(%d): %s", at, *ms, confval.DurationOverflow)}
	}
	return declarative.Value[time.Duration]{At: at, V: time.Duration(*ms) * time.Millisecond}
}

// exporterSettings takes the processor's one exporter, at its key at.
func exporterSettings(at string, e declarative.Exporter) declarative.ExporterSettings {
	n := 0
	for _, set := range []bool{e.Console, e.OTLPGrpc != nil, e.OTLPHttp != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return declarative.ExporterSettings{Refused: errors.New(at + ": no exporter zaplens can run; it runs otlp_grpc, otlp_http or console")}
	case n > 1:
		return declarative.ExporterSettings{Refused: errors.New(at + ": more than one exporter; zaplens runs one")}
	}
	if e.Console {
		return declarative.ExporterSettings{Name: declarative.Value[string]{At: at + ".console", V: "console"}}
	}
	if g := e.OTLPGrpc; g != nil {
		return otlp(at+".otlp_grpc", transport.GRPC, g)
	}
	h := e.OTLPHttp
	at += ".otlp_http"
	out := otlp(at, transport.HTTPProtobuf, h)
	if h.Encoding != nil && *h.Encoding != "protobuf" {
		out.Name.Err = fmt.Errorf("%s.encoding: %q is not supported; use protobuf, which every collector accepts", at, *h.Encoding)
	}
	return out
}

// otlp takes the OTLP exporter at. Its headers are checked, as an
// option's, by the protocol the pipeline resolves (otlplog's readHeaders).
func otlp(at string, protocol transport.Protocol, o *declarative.OTLP) declarative.ExporterSettings {
	out := declarative.ExporterSettings{
		Name:     declarative.Value[string]{At: at, V: "otlp"},
		Protocol: declarative.Value[string]{At: at, V: string(protocol)},
		Timeout:  millis(at+".timeout", o.Timeout),
	}
	if o.Endpoint != nil {
		ep := strings.TrimSpace(*o.Endpoint)
		// The file's insecure (gRPC's only) applies to an endpoint without scheme only.
		if o.TLS.Insecure != nil && *o.TLS.Insecure && !strings.Contains(ep, "://") {
			ep = "http://" + ep
		}
		out.Endpoint = declarative.Value[string]{At: at + ".endpoint", V: ep}
		if _, err := transport.ParseEndpoint(ep, protocol, false); err != nil {
			out.Endpoint.Err = fmt.Errorf("%s.endpoint: %w", at, err)
		}
	}
	if o.Compression != nil {
		out.Compression = declarative.Value[string]{At: at + ".compression", V: *o.Compression}
		if !confval.Compression(*o.Compression) {
			out.Compression.Err = fmt.Errorf("%s.compression: %q is not supported; want gzip or none", at, *o.Compression)
		}
	}
	if o.Headers != nil || o.HeadersList != nil {
		h, err := fileHeaders(at, o.Headers, o.HeadersList)
		out.Headers = declarative.Value[map[string]string]{At: at + ".headers", V: h, Err: err}
	}
	if t := o.TLS; t.CAFile != nil || t.CertFile != nil || t.KeyFile != nil {
		out.TLS = declarative.Value[confval.TLSFiles]{At: at + ".tls", V: tlsFiles(at+".tls", t)}
	}
	return out
}

// fileHeaders is headers_list, then headers, which win, as otelconf takes
// them; a header whose value is null is left out.
func fileHeaders(at string, headers []declarative.Header, list *string) (map[string]string, error) {
	h := map[string]string{}
	if list != nil {
		pairs, err := confval.ParsePairs(at+".headers_list", *list, confval.HeaderValue)
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

// tlsFiles is the tls section at, its files named by their keys, for the
// pipeline to load as the certificate variables are loaded (otlplog's
// fileTLS).
func tlsFiles(at string, t declarative.TLS) confval.TLSFiles {
	unpaired := at + ".key_file: missing; cert_file needs it"
	if t.CertFile == nil {
		unpaired = at + ".cert_file: missing; key_file needs it"
	}
	return confval.TLSFiles{CA: t.CAFile, Cert: t.CertFile, Key: t.KeyFile,
		CAName: at + ".ca_file", PairName: at + ".cert_file and key_file", Unpaired: unpaired}
}

// limits takes logger_provider.limits, or else the general
// attribute_limits, as otelconf gives them to sdk/log.
func limits(s *declarative.Settings, general, l *declarative.Limits) {
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
	s.AttributeCount = intValue(countAt+".attribute_count_limit", count)
	s.AttributeValueLength = intValue(lengthAt+".attribute_value_length_limit", length)
}
