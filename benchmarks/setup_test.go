package benchmarks

import (
	"context"
	"errors"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// countingExporter counts the records it is handed and discards them, so a
// benchmark pays the whole OTel SDK path (record construction, batching,
// the export goroutine) but no network.
type countingExporter struct {
	records atomic.Int64
}

func (e *countingExporter) Export(_ context.Context, recs []sdklog.Record) error {
	e.records.Add(int64(len(recs)))
	return nil
}
func (e *countingExporter) Shutdown(context.Context) error   { return nil }
func (e *countingExporter) ForceFlush(context.Context) error { return nil }

// newCountingProvider is a real sdk/log provider with the SDK's default
// BatchProcessor in front of a counting exporter.
func newCountingProvider(opts ...sdklog.LoggerProviderOption) (*sdklog.LoggerProvider, *countingExporter) {
	exp := &countingExporter{}
	opts = append([]sdklog.LoggerProviderOption{sdklog.WithProcessor(sdklog.NewBatchProcessor(exp))}, opts...)
	return sdklog.NewLoggerProvider(opts...), exp
}

// The provider every contender of the benchmarks shares.
var sharedProvider, _ = newCountingProvider()

// newBaseCore is the user's existing core: zap's production JSON encoder
// writing to io.Discard, at Info.
func newBaseCore() zapcore.Core {
	return zapcore.NewCore(
		zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
		zapcore.AddSync(io.Discard),
		zapcore.InfoLevel,
	)
}

// newLogger wraps a contender's core the way zap.NewProduction does, less
// the caller (which would add three attributes to every record of every
// contender alike): stacks on Error and above.
func newLogger(core zapcore.Core) *zap.Logger {
	return zap.New(core, zap.AddStacktrace(zapcore.ErrorLevel))
}

// traceCtx carries a valid, sampled span context, as a context inside a
// training step's span does.
var traceCtx = trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	TraceFlags: trace.FlagsSampled,
}))

var errNaN = errors.New("loss is NaN")

// The names of the workloads' loggers. The zaplens contender bridges only
// bridgedPrefix; the official bridge has no such filter.
const (
	bridgedPrefix = "megatron"
	namedLogger   = "megatron.training"
	outsideLogger = "torch.distributed"
)

// attrs5 are the attributes the SDK floor emits for fields5.
func attrs5(i int) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Int("step", i),
		attribute.Float64("loss", 0.41),
		attribute.Float64("lr", 3e-4),
		attribute.Int64("tokens", 524288),
		attribute.String("phase", "train"),
	}
}

func attrs10(i int) []attribute.KeyValue {
	return append(attrs5(i),
		attribute.Float64("grad_norm", 1.25),
		attribute.Int("epoch", 3),
		attribute.Int("rank", 0),
		attribute.Int64("elapsed", int64(1500*time.Millisecond)),
		attribute.Bool("overflow", false),
	)
}

// floorRecord builds, once, the record a bridge would build for a line.
func floorRecord(sev log.Severity, body string, attrs []attribute.KeyValue) log.Record {
	var r log.Record
	r.SetTimestamp(time.Now())
	r.SetObservedTimestamp(time.Now())
	r.SetSeverity(sev)
	r.SetSeverityText(zapLevelText(sev))
	r.SetBody(attribute.StringValue(body))
	r.AddAttributes(attrs...)
	return r
}

func zapLevelText(sev log.Severity) string {
	switch sev {
	case log.SeverityError:
		return "error"
	case log.SeverityDebug:
		return "debug"
	default:
		return "info"
	}
}

// errorAttrs are what a bridge makes of zap.Error(errNaN) and a stack.
func errorAttrs(i int) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Int("step", i),
		attribute.String("exception.message", errNaN.Error()),
		attribute.String("exception.type", "*errors.errorString"),
		attribute.String("exception.stacktrace", string(debug.Stack())),
	}
}
