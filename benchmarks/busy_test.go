package benchmarks

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelzap"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// A busyBridge is a bridge with its whole export pipeline to an OTLP/gRPC
// endpoint, as a user would set it up.
type busyBridge struct {
	name  string
	start func(tb testing.TB, addr string) busyPipeline
}

type busyPipeline struct {
	core     func(base zapcore.Core) zapcore.Core
	ctx      func(context.Context) zap.Field
	shutdown func(context.Context) error
	// counted is the records the pipeline says it lost (dropped or failed);
	// ok is false for a pipeline that does not count them.
	counted func() (lost int64, ok bool)
}

var busyBridges = []busyBridge{{
	// The official bridge with the SDK's defaults: BatchProcessor (queue
	// 2048, batch 512, 1 s interval) in front of otlploggrpc.
	name: "official",
	start: func(tb testing.TB, addr string) busyPipeline {
		exp, err := otlploggrpc.New(context.Background(),
			otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure())
		if err != nil {
			tb.Fatal(err)
		}
		p := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
		return busyPipeline{
			core: func(base zapcore.Core) zapcore.Core {
				return zapcore.NewTee(base, otelzap.NewCore("github.com/zaplens/zaplens/benchmarks",
					otelzap.WithLoggerProvider(p)))
			},
			ctx:      func(ctx context.Context) zap.Field { return zap.Any("ctx", ctx) },
			shutdown: p.Shutdown,
			counted:  func() (int64, bool) { return 0, false },
		}
	},
}}

// busySize is the busy rank's shape: steps of lines, each followed by
// pause when the scenario computes. The figures (10 × 10,000 lines,
// 0.5 s) run when ZAPLENS_BENCH_BUSY=full, as run.sh sets; otherwise a tenth
// of the lines and of the pause, so that the CI's -benchtime=1x run stays
// quick.
func busySize() (steps, lines int, pause time.Duration) {
	if os.Getenv("ZAPLENS_BENCH_BUSY") == "full" {
		return 10, 10_000, 500 * time.Millisecond
	}
	return 10, 1_000, 50 * time.Millisecond
}

// BenchmarkBusyRank is case 8: a rank that logs a burst of lines per
// training step as fast as its loop goes, with or without compute (a sleep:
// the rank waits on its GPU, leaving the CPU to the exporter) between steps,
// to an OTLP/gRPC receiver on loopback. Each op is the whole run; it
// reports the caller's lines per second, the process's CPU time per 1,000
// lines including export (getrusage, up to the end of Shutdown) and per
// 1,000 lines delivered, the share the receiver acknowledged, and the
// losses the pipeline did not count.
func BenchmarkBusyRank(b *testing.B) {
	steps, lines, pause := busySize()
	recv := startReceiver(b)
	for _, compute := range []bool{true, false} {
		name := "compute=none"
		if compute {
			name = "compute=" + pause.String()
		}
		b.Run(name, func(b *testing.B) {
			for _, br := range busyBridges {
				b.Run("bridge="+br.name, func(b *testing.B) {
					var res busyResult
					for b.Loop() {
						res.add(busyRun(b, recv, br, steps, lines, compute, pause))
					}
					res.report(b)
				})
			}
		})
	}
}

type busyResult struct {
	lines, delivered, uncounted int64
	logging, cpu                time.Duration
}

func (r *busyResult) add(o busyResult) {
	r.lines += o.lines
	r.delivered += o.delivered
	r.uncounted += o.uncounted
	r.logging += o.logging
	r.cpu += o.cpu
}

func (r *busyResult) report(b *testing.B) {
	b.ReportMetric(float64(r.lines)/r.logging.Seconds(), "lines/s")
	cpuMs := float64(r.cpu.Microseconds()) / 1000
	b.ReportMetric(cpuMs/(float64(r.lines)/1000), "cpu-ms/1k-lines")
	if r.delivered > 0 {
		b.ReportMetric(cpuMs/(float64(r.delivered)/1000), "cpu-ms/1k-delivered")
	}
	b.ReportMetric(100*float64(r.delivered)/float64(r.lines), "%delivered")
	b.ReportMetric(float64(r.uncounted), "uncounted-losses")
}

func busyRun(b *testing.B, recv *otlpReceiver, br busyBridge, steps, lines int, compute bool, pause time.Duration) busyResult {
	before := recv.Count(b)
	pl := br.start(b, recv.Addr)
	l := newLogger(pl.core(newBaseCore()))
	cf := pl.ctx(traceCtx)
	cpu0 := cpuTime()
	var logging time.Duration
	for s := range steps {
		t0 := time.Now()
		for i := range lines {
			info5(l, cf, s*lines+i)
		}
		logging += time.Since(t0)
		if compute {
			time.Sleep(pause)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pl.shutdown(ctx); err != nil {
		b.Logf("%s: shutdown: %v", br.name, err)
	}
	cpu := cpuTime() - cpu0
	total := int64(steps * lines)
	delivered := recv.Count(b) - before
	res := busyResult{lines: total, delivered: delivered, logging: logging, cpu: cpu}
	if lost, ok := pl.counted(); ok {
		res.uncounted = total - delivered - lost
	} else {
		res.uncounted = total - delivered
	}
	return res
}

// cpuTime is the user and system CPU time of the whole process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
