package otlplog

import (
	"context"
	"testing"

	"github.com/zaplens/zaplens"

	"go.uber.org/zap"
)

// BenchmarkSpool is the logging call on a provider whose export discards,
// as BenchmarkWire, with the spool off and on (files in the test's
// temporary directory, on its disk): the spool's cost is the difference.
func BenchmarkSpool(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	fields := caseOneFields(ctx)
	for _, on := range []bool{false, true} {
		name := "spool=off"
		opts := []Option{WithLossWriter(nil), withDiscardExport()}
		if on {
			name = "spool=on"
			opts = append(opts, WithSpool(b.TempDir()))
		}
		b.Run(name, func(b *testing.B) {
			p, err := NewLoggerProvider(context.Background(), opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Shutdown(context.Background())
			logger := zap.New(zaplens.NewTee(jsonDiscard(), zaplens.WithLoggerProvider(p)))
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				logger.Info("step done", fields...)
			}
			_ = p.ForceFlush(context.Background())
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			if s := p.Stats(); s.Dropped+s.Failed+s.Unprotected > 0 {
				b.Errorf("losses: %+v", s)
			}
		})
	}
}
