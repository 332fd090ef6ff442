// Package configfile lets otlplog's NewLoggerProvider (and ShipSpool) read
// the OpenTelemetry declarative configuration file that OTEL_CONFIG_FILE
// names. Import it for its effect, as image/png is imported to register
// its decoder:
//
//	import _ "github.com/zaplens/zaplens/otlplog/configfile"
//
// The file is read with go.opentelemetry.io/contrib/otelconf's parser,
// the one otelconf.NewSDK uses for the program's other providers, ${VAR}
// substitution included; its logger_provider, limits and resource
// sections are checked and turned into the pipeline's settings here, and
// otlplog gives them to the settings no option set, reading the tls
// section's certificate files only then. otelconf links the SDK's trace
// and metric exporters too, about 1.3 MB, which is why the pipeline
// leaves the file to this package: without the import, NewLoggerProvider
// refuses a set OTEL_CONFIG_FILE with an error naming this package,
// rather than quietly reading the variables the file was meant to
// replace.
package configfile

import (
	"context"

	"go.opentelemetry.io/contrib/otelconf"

	"github.com/zaplens/zaplens/internal/declarative"
)

func init() { declarative.Register(load) }

// load reads the file into the pipeline's settings.
func load(ctx context.Context, file []byte) (*declarative.Settings, error) {
	cfg, err := parse(file)
	if err != nil {
		return nil, err
	}
	return settings(ctx, cfg)
}

// parse reads the file with otelconf and copies what zaplens reads of it
// (settings).
func parse(file []byte) (*declarative.Config, error) {
	cfg, err := otelconf.ParseYAML(file)
	if err != nil {
		return nil, err
	}
	out := &declarative.Config{
		Disabled: cfg.Disabled != nil && *cfg.Disabled,
		Resource: resource(cfg.Resource),
	}
	if l := cfg.AttributeLimits; l != nil {
		out.AttributeLimits = &declarative.Limits{AttributeCountLimit: l.AttributeCountLimit, AttributeValueLengthLimit: l.AttributeValueLengthLimit}
	}
	if lp := cfg.LoggerProvider; lp != nil {
		out.LoggerProvider = &declarative.LoggerProvider{Processors: make([]declarative.Processor, len(lp.Processors))}
		if l := lp.Limits; l != nil {
			out.LoggerProvider.Limits = &declarative.Limits{AttributeCountLimit: l.AttributeCountLimit, AttributeValueLengthLimit: l.AttributeValueLengthLimit}
		}
		for i, p := range lp.Processors {
			out.LoggerProvider.Processors[i] = processor(p)
		}
	}
	return out, nil
}

func processor(p otelconf.LogRecordProcessor) declarative.Processor {
	out := declarative.Processor{Simple: p.Simple != nil}
	if b := p.Batch; b != nil {
		out.Batch = &declarative.Batch{
			MaxQueueSize:       b.MaxQueueSize,
			MaxExportBatchSize: b.MaxExportBatchSize,
			ScheduleDelay:      b.ScheduleDelay,
			ExportTimeout:      b.ExportTimeout,
			Exporter:           exporter(b.Exporter),
		}
	}
	return out
}

func exporter(e otelconf.LogRecordExporter) declarative.Exporter {
	out := declarative.Exporter{Console: e.Console != nil}
	if g := e.OTLPGrpc; g != nil {
		out.OTLPGrpc = &declarative.OTLP{Endpoint: g.Endpoint, Compression: g.Compression, Timeout: g.Timeout,
			Headers: headers(g.Headers), HeadersList: g.HeadersList}
		if t := g.Tls; t != nil {
			out.OTLPGrpc.TLS = declarative.TLS{CAFile: t.CaFile, CertFile: t.CertFile, KeyFile: t.KeyFile, Insecure: t.Insecure}
		}
	}
	if h := e.OTLPHttp; h != nil {
		out.OTLPHttp = &declarative.OTLP{Endpoint: h.Endpoint, Compression: h.Compression, Timeout: h.Timeout,
			Headers: headers(h.Headers), HeadersList: h.HeadersList}
		if h.Encoding != nil {
			enc := string(*h.Encoding)
			out.OTLPHttp.Encoding = &enc
		}
		if t := h.Tls; t != nil {
			out.OTLPHttp.TLS = declarative.TLS{CAFile: t.CaFile, CertFile: t.CertFile, KeyFile: t.KeyFile}
		}
	}
	return out
}

func headers(hs []otelconf.NameStringValuePair) []declarative.Header {
	if hs == nil {
		return nil // absent, not empty: the pipeline tells the two apart
	}
	out := make([]declarative.Header, len(hs))
	for i, h := range hs {
		out[i] = declarative.Header{Name: h.Name, Value: h.Value}
	}
	return out
}

func resource(r *otelconf.Resource) *declarative.Resource {
	if r == nil {
		return nil
	}
	out := &declarative.Resource{AttributesList: r.AttributesList, SchemaURL: r.SchemaUrl}
	for _, a := range r.Attributes {
		t := ""
		if a.Type != nil {
			t = string(*a.Type)
		}
		out.Attributes = append(out.Attributes, declarative.Attribute{Name: a.Name, Type: t, Value: a.Value})
	}
	return out
}
