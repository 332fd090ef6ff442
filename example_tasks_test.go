package zaplens_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/zaplens/zaplens"
)

// discardProvider is a otlplog.NewLoggerProvider whose records are written and
// thrown away, so that an example runs without a collector; its otlplog.Stats say
// how many the bridge handed over.
func discardProvider(opts ...otlplog.Option) *otlplog.LoggerProvider {
	opts = append([]otlplog.Option{otlplog.WithExporterName("console"), otlplog.WithConsoleWriter(io.Discard)}, opts...)
	p, _ := otlplog.NewLoggerProvider(context.Background(), opts...)
	return p
}

// zap's sampler applies to the core it wraps. Around base alone (as
// zap.NewProduction has it), the bridge still gets every entry; around the
// whole tee, base and the bridge are sampled alike; around the bridge
// alone, stdout stays whole and the backend is sampled. Base here has no
// sampler of its own: with one, the two samplers would count apart.
func Example_sampling() {
	sample := func(c zapcore.Core) zapcore.Core {
		return zapcore.NewSamplerWithOptions(c, time.Second, 100, 100) // zap.NewProduction's
	}
	for _, where := range []string{"base", "tee", "bridge"} {
		provider := discardProvider()
		base, printed := observer.New(zapcore.InfoLevel)
		var logger *zap.Logger
		switch where {
		case "base":
			logger = zap.New(zaplens.NewTee(sample(base), zaplens.WithLoggerProvider(provider)))
		case "tee":
			logger = zap.New(sample(zaplens.NewTee(base, zaplens.WithLoggerProvider(provider))))
		case "bridge":
			logger = zap.New(zapcore.NewTee(base, sample(zaplens.NewCore(zaplens.WithLoggerProvider(provider)))))
		}
		for range 1000 {
			logger.Info("same line")
		}
		_ = provider.Shutdown(context.Background())
		fmt.Printf("sampler around %s: %d printed, %d bridged\n", where, printed.Len(), provider.Stats().Emitted)
	}
	// Output:
	// sampler around base: 109 printed, 1000 bridged
	// sampler around tee: 109 printed, 109 bridged
	// sampler around bridge: 1000 printed, 109 bridged
}

// A program stops in this order: its own work (an HTTP server's
// Shutdown), then Sync, which flushes the pipeline within its bound (5 s),
// then the provider's Shutdown, within the deadline of its context. A
// non-nil error is a *otlplog.DeliveryError that says what was lost.
func Example_shutdown() {
	provider := discardProvider()
	logger := zap.NewNop().WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))
	logger.Info("last line")

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	_ = logger.Sync()
	err := provider.Shutdown(ctx)
	var lost *otlplog.DeliveryError
	fmt.Println(err, errors.As(err, &lost), provider.Stats())
	// Output: <nil> false emitted 1, exported 1, dropped 0, failed 0, queued 0
}

// The bridge's settings come from the environment when no option sets
// them, so that a deployment can change them without a build: here
// ZAPLENS_LEVEL. An option in code wins.
func Example_environment() {
	os.Setenv("ZAPLENS_LEVEL", "debug")
	defer os.Unsetenv("ZAPLENS_LEVEL")

	fromEnv := zaplens.NewCore()
	fromCode := zaplens.NewCore(zaplens.WithLevel(zapcore.WarnLevel))
	fmt.Println(fromEnv.Enabled(zapcore.DebugLevel), fromCode.Enabled(zapcore.InfoLevel))
	// Output: true false
}

// The logs of a trace that is not kept stay out of the backend, below
// Warn; stdout still has every line, with its ids.
func ExampleWithTraceBased() {
	logger, provider, ctx := exampleSetup() // a sampled span
	unsampled := unsampledContext()
	logger = logger.WithOptions(zaplens.WrapCore(
		zaplens.WithLoggerProvider(provider),
		zaplens.WithTraceBased(zapcore.WarnLevel),
	))

	logger.Info("kept trace", zaplens.Context(ctx))
	logger.Info("dropped trace", zaplens.Context(unsampled))
	logger.Warn("dropped trace, but a warning", zaplens.Context(unsampled))
	// Output:
	// {"level":"info","msg":"kept trace","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}
	// otel: scope=zaplens severity=INFO body="kept trace" trace=4bf92f3577b34da6a3ce929d0e0e4736
	// {"level":"info","msg":"dropped trace","trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331"}
	// {"level":"warn","msg":"dropped trace, but a warning","trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331"}
	// otel: scope=zaplens severity=WARN body="dropped trace, but a warning" trace=0af7651916cd43dd8448eb211c80319c
}

// A program moving from the official bridge (go.opentelemetry.io/contrib/
// bridges/otelzap) keeps its zap.Any("ctx", ctx) fields: a field whose value
// is a context.Context is taken as the entry's context and stripped from
// base's line, as zaplens.Context is.
func ExampleContext_officialStyle() {
	logger, provider, ctx := exampleSetup()
	logger = logger.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))

	logger.Info("request", zap.Any("ctx", ctx), zap.String("path", "/a"))
	// Output:
	// {"level":"info","msg":"request","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","path":"/a"}
	// otel: scope=zaplens severity=INFO body="request" trace=4bf92f3577b34da6a3ce929d0e0e4736 path=/a
}

// unsampledContext holds a valid span whose trace is not kept.
func unsampledContext() context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
		SpanID:  trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
	})
	return trace.ContextWithSpanContext(context.Background(), sc)
}
