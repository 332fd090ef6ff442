package zaplens

import (
	"context"
	"testing"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
)

// BenchmarkRedact is BenchmarkWire's line, and BenchmarkEmit's record, on a
// provider with otlplog.WithRedactKeys of four keys: keys=none is without it, the
// path BenchmarkWire measures; nomatch has the keys and no field matching
// them, the usual case; match has one of the fields match.
func BenchmarkRedact(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	keys := []string{"password", "Authorization", "api_key", "secret"}
	for _, bc := range []struct {
		name   string
		keys   []string
		fields []zap.Field
	}{
		{"keys=none", nil, caseOneFields(ctx)},
		{"keys=4/nomatch", keys, caseOneFields(ctx)},
		{"keys=4/match", keys, append(caseOneFields(ctx)[:5], zap.String("password", "hunter2"))},
	} {
		p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport(), otlplog.WithRedactKeys(bc.keys...))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("wire/"+bc.name, func(b *testing.B) {
			logger := zap.New(NewCore(WithLoggerProvider(p)))
			b.ReportAllocs()
			for b.Loop() {
				logger.Info("step done", bc.fields...)
			}
		})
		b.Run("emit/"+bc.name, func(b *testing.B) {
			l := p.Logger("emit")
			r := emitBenchRecord()
			if bc.name == "keys=4/match" {
				r.AddAttributes(attribute.String("secret", "s3"))
			}
			b.ReportAllocs()
			for b.Loop() {
				l.Emit(context.Background(), r)
			}
		})
		_ = p.Shutdown(context.Background())
	}
}
