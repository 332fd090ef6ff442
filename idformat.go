package zaplens

import (
	"os"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// An IDFormat writes the trace and span ids into a tee's base output, in the
// form a log agent joins on. AppendIDs appends the fields for sc, a valid
// span context, to fields and returns the result; the tee calls it for every
// entry whose context holds a valid span, before the entry's own fields.
//
// The formats apply to the base core's output only: the OpenTelemetry record
// carries its ids in its own fields. AppendIDs is called once per line, from
// many goroutines at once: a format that renders strings should keep the last
// span's, as the provided formats do, or every line costs an allocation.
type IDFormat interface {
	AppendIDs(fields []zapcore.Field, sc trace.SpanContext) []zapcore.Field
}

// WithIDFormat sets how a tee writes the ids into its base core's output;
// the default is trace_id and span_id in lowercase hex. nil writes no ids.
// It and [WithTraceKeys] set the same thing: the last one given wins.
func WithIDFormat(f IDFormat) Option {
	return optionFunc(func(c *config) {
		c.idFormat = f
		if a, ok := f.(appliedFormat); ok {
			c.idFormat = a.applied() // each time: f is shared by every core built with the option
		}
	})
}

// appliedFormat is a format that completes itself when its option is
// applied: [GoogleCloudIDs] reads the environment then.
type appliedFormat interface {
	applied() IDFormat
}

// keyedIDs is every provided format: the two ids as strings under their
// keys, and, for Google Cloud, the sampling flag. An empty key leaves its
// field out.
type keyedIDs struct {
	traceKey, spanKey, sampledKey string
	cache                         *idCache
}

func (f *keyedIDs) AppendIDs(fields []zapcore.Field, sc trace.SpanContext) []zapcore.Field {
	ids := f.cache.get(sc)
	if f.traceKey != "" {
		fields = append(fields, zap.String(f.traceKey, ids.trace))
	}
	if f.spanKey != "" {
		fields = append(fields, zap.String(f.spanKey, ids.span))
	}
	if f.sampledKey != "" {
		fields = append(fields, zap.Bool(f.sampledKey, sc.IsSampled()))
	}
	return fields
}

// hexIDs is the default format under other keys; nil when both are empty,
// so that the tee skips even the span lookup.
func hexIDs(traceKey, spanKey string) IDFormat {
	if traceKey == "" && spanKey == "" {
		return nil
	}
	return &keyedIDs{traceKey: traceKey, spanKey: spanKey, cache: hexCache("")}
}

// DatadogIDs writes dd.trace_id and dd.span_id, each the decimal string of
// the id's lower 64 bits: Datadog's rule for OpenTelemetry ids. dd.trace_id
// is the attribute Datadog's trace remapper reads by default.
func DatadogIDs() IDFormat {
	return &keyedIDs{traceKey: "dd.trace_id", spanKey: "dd.span_id", cache: decimalCache()}
}

// ECSIDs writes trace.id and span.id in lowercase hex: the Elastic Common
// Schema fields that Kibana's log and APM views join on.
func ECSIDs() IDFormat {
	return hexIDs("trace.id", "span.id")
}

// googleProjectEnv names the project when [GoogleCloudIDs] is given none.
const googleProjectEnv = "GOOGLE_CLOUD_PROJECT"

// GoogleCloudIDs writes Google Cloud Logging's special fields:
// logging.googleapis.com/trace as projects/<project>/traces/<trace id hex>,
// logging.googleapis.com/spanId in hex, and logging.googleapis.com/trace_sampled
// as a bool. An empty project is read from GOOGLE_CLOUD_PROJECT once, when
// the [WithIDFormat] option is applied; if that is empty too, the trace is
// the bare hex id.
func GoogleCloudIDs(project string) IDFormat {
	if project == "" {
		return googleFromEnv{googleIDs("")}
	}
	return googleIDs(project)
}

func googleIDs(project string) *keyedIDs {
	prefix := ""
	if project != "" {
		prefix = "projects/" + project + "/traces/"
	}
	return &keyedIDs{
		traceKey:   "logging.googleapis.com/trace",
		spanKey:    "logging.googleapis.com/spanId",
		sampledKey: "logging.googleapis.com/trace_sampled",
		cache:      hexCache(prefix),
	}
}

// googleFromEnv is GoogleCloudIDs(""): without a project until its option
// is applied, which reads the environment.
type googleFromEnv struct{ *keyedIDs }

func (googleFromEnv) applied() IDFormat { return googleIDs(os.Getenv(googleProjectEnv)) }
