package zaplens

import (
	"context"
	"syscall"
	"testing"
	"time"

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
		opts := []ProviderOption{WithLossWriter(nil), withDiscardExport()}
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
			logger := zap.New(NewTee(jsonDiscard(), WithLoggerProvider(p)))
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

// processCPU is the CPU time of the whole process so far, all threads, in
// user and kernel mode: unlike the time per op, the load of other
// processes on the machine does not change it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
