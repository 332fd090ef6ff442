package zaplens_test

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

// printExporter prints what the OTel SDK would ship, one record a line.
type printExporter struct{}

func (printExporter) Export(_ context.Context, rs []sdklog.Record) error {
	for _, r := range rs {
		fmt.Printf("otel: scope=%s severity=%s body=%q trace=%s", r.InstrumentationScope().Name,
			r.Severity(), r.Body().AsString(), r.TraceID())
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
			return true
		})
		fmt.Println()
	}
	return nil
}

func (printExporter) Shutdown(context.Context) error   { return nil }
func (printExporter) ForceFlush(context.Context) error { return nil }

// exampleSetup returns a JSON logger on stdout, as programs have, a provider
// that prints, and a context inside a span with fixed ids.
func exampleSetup() (*zap.Logger, *sdklog.LoggerProvider, context.Context) {
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = ""
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(os.Stdout), zapcore.InfoLevel))
	provider := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(printExporter{})))
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	return logger, provider, trace.ContextWithSpanContext(context.Background(), sc)
}

// An existing logger gains the bridge; its own output gains the ids.
func ExampleWrapCore() {
	logger, provider, ctx := exampleSetup()
	logger = logger.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))

	logger.Info("step done", zaplens.Context(ctx), zap.Int("step", 12), zap.Float64("loss", 0.41))
	// Output:
	// {"level":"info","msg":"step done","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","step":12,"loss":0.41}
	// otel: scope=zaplens severity=INFO body="step done" trace=4bf92f3577b34da6a3ce929d0e0e4736 step=12 loss=0.41
}

// Only the training loggers are bridged, from Info up; base still prints all.
func ExampleNewTee() {
	base, provider, ctx := exampleSetup()
	logger := zap.New(zaplens.NewTee(base.Core(),
		zaplens.WithLoggerProvider(provider),
		zaplens.WithLoggerName("megatron.training"),
	))

	logger.Named("megatron.training.loop").Info("bridged", zaplens.Context(ctx))
	logger.Named("megatron.data").Info("not bridged")
	// Output:
	// {"level":"info","logger":"megatron.training.loop","msg":"bridged","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}
	// otel: scope=megatron.training.loop severity=INFO body="bridged" trace=4bf92f3577b34da6a3ce929d0e0e4736
	// {"level":"info","logger":"megatron.data","msg":"not bridged"}
}

// With zapcore.NewTee the other core does not print the ids; the context
// field prints nothing at all.
func ExampleNewCore() {
	base, provider, ctx := exampleSetup()
	logger := zap.New(zapcore.NewTee(base.Core(), zaplens.NewCore(zaplens.WithLoggerProvider(provider))))

	logger.Warn("disk almost full", zaplens.Context(ctx), zap.Int("free_mb", 512))
	// Output:
	// {"level":"warn","msg":"disk almost full","free_mb":512}
	// otel: scope=zaplens severity=WARN body="disk almost full" trace=4bf92f3577b34da6a3ce929d0e0e4736 free_mb=512
}

// A context given to With correlates every later entry of that logger.
func ExampleContext() {
	base, provider, ctx := exampleSetup()
	logger := base.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))

	step := logger.With(zaplens.Context(ctx), zap.Int("step", 3))
	step.Info("forward")
	// Output:
	// {"level":"info","msg":"forward","step":3,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}
	// otel: scope=zaplens severity=INFO body="forward" trace=4bf92f3577b34da6a3ce929d0e0e4736 step=3
}
