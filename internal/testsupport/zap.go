package testsupport

import (
	"context"
	"io"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// SkipAllocsUnderRace skips an allocation test under the race detector,
// whose counts are meaningless.
func SkipAllocsUnderRace(t *testing.T) {
	t.Helper()
	if RaceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
}

// SpanContext starts a real span and returns its context.
func SpanContext(t testing.TB) (context.Context, trace.SpanContext) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(context.Background(), "step")
	t.Cleanup(func() { span.End() })
	return ctx, span.SpanContext()
}

// JSONDiscard is a JSON core at Info that writes nowhere: the user's own
// core, for benchmarks.
func JSONDiscard() zapcore.Core {
	return zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
}
