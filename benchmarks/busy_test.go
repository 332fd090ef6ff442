package benchmarks

import (
	"os"
	"testing"
	"time"

	"go.uber.org/zap"
)

// busySize is the busy rank's shape: steps of lines, each followed by
// pause when the scenario computes. The figures (10 × 10,000 lines,
// 0.5 s) run when ZAPLENS_BENCH_BUSY=full, as run.sh sets; otherwise one
// step of 1,000 lines and 50 ms, so that the -benchtime=1x smoke run stays
// quick.
func busySize() (steps, lines int, pause time.Duration) {
	if os.Getenv("ZAPLENS_BENCH_BUSY") == "full" {
		return 10, 10_000, 500 * time.Millisecond
	}
	return 1, 1_000, 50 * time.Millisecond
}

// busyLine is the busy rank's line: four fields, no context, as in the
// README's "Defaults, and what they cost" (docs/busyrank/burst.go).
func busyLine(l *zap.Logger, step, i int) {
	l.Info("step progress", zap.Int("step", step), zap.Int("i", i), zap.Float64("loss", 0.41), zap.String("phase", "train"))
}

// BenchmarkBusyRank is a training rank that logs a burst of lines per step
// as fast as its loop goes, then computes (a sleep: the rank waits on its
// GPU and leaves the CPU to the exporter), or, with compute=none, logs all
// its steps back to back: BenchmarkBusyRank/compute=D/bridge=NAME. Each
// bridge runs its own pipeline exporting over OTLP/gRPC to cmd/otlpsink in
// another process: zaplens with its defaults, the official bridge with the
// SDK's defaults but a queue of two steps of lines
// (sdklog.WithMaxQueueSize), so that with compute it delivers everything
// too; zap alone is the cost without any bridge.
//
// Each op is two whole runs, each from a fresh receiver and pipeline. The
// first measures, from the first line to the end of Shutdown, the
// process's CPU time (getrusage) per line logged (cpu-ns/line) and per line
// the receiver counted once (cpu-ns/delivered), and the lines per second of
// the logging loop alone. The second, identical, samples the heap every
// 2 ms for the highest heap in use above the heap before the pipeline was
// built (peak-heap-MiB): the sampler's wake-ups cost CPU of their own (about
// 30 µs each on an idle process, 1.5 µs per line of a 5 s run), which is
// why it stays out of the first. Over both runs it reports the share
// delivered, the lines that arrived twice (duplicates) and the lines
// neither delivered nor counted as lost by the pipeline (uncounted-losses;
// the SDK counts none).
func BenchmarkBusyRank(b *testing.B) {
	steps, lines, pause := busySize()
	for _, compute := range []time.Duration{pause, 0} {
		name := "compute=none"
		if compute > 0 {
			name = "compute=" + compute.String()
		}
		b.Run(name, func(b *testing.B) {
			for _, br := range pipelineNames {
				b.Run("bridge="+br, func(b *testing.B) {
					var res busyResult
					for b.Loop() {
						res.add(busyRun(b, br, steps, lines, compute, false))
						res.add(busyRun(b, br, steps, lines, compute, true))
					}
					res.report(b, br != "zap")
				})
			}
		})
	}
}

// busyResult sums runs: the measured ones (cpu...) and all (the rest).
type busyResult struct {
	lines, delivered, dups, uncounted int64
	cpuLines, cpuDelivered            int64 // of the measured runs
	logging, cpu                      time.Duration
	peakMiB                           float64
}

func (r *busyResult) add(o busyResult) {
	r.lines += o.lines
	r.delivered += o.delivered
	r.dups += o.dups
	r.uncounted += o.uncounted
	r.cpuLines += o.cpuLines
	r.cpuDelivered += o.cpuDelivered
	r.logging += o.logging
	r.cpu += o.cpu
	r.peakMiB = max(r.peakMiB, o.peakMiB)
}

func (r *busyResult) report(b *testing.B, exports bool) {
	b.ReportMetric(float64(r.cpuLines)/r.logging.Seconds(), "lines/s")
	b.ReportMetric(float64(r.cpu.Nanoseconds())/float64(r.cpuLines), "cpu-ns/line")
	b.ReportMetric(r.peakMiB, "peak-heap-MiB")
	if !exports {
		return
	}
	if r.cpuDelivered > 0 {
		b.ReportMetric(float64(r.cpu.Nanoseconds())/float64(r.cpuDelivered), "cpu-ns/delivered")
	}
	b.ReportMetric(100*float64(r.delivered)/float64(r.lines), "%delivered")
	b.ReportMetric(float64(r.dups), "duplicates")
	b.ReportMetric(float64(r.uncounted), "uncounted-losses")
}

// busyRun runs the scenario once: measured for CPU, or with the heap
// sampler.
func busyRun(b *testing.B, name string, steps, lines int, compute time.Duration, sampleHeap bool) busyResult {
	s := startSink(b)
	var heap *heapPeak
	if sampleHeap {
		heap = startHeapPeak()
	}
	p := startPipeline(b, name, s, pipelineConfig{officialQueue: 2 * lines})
	cpu0 := cpuTime()
	var logging time.Duration
	for step := range steps {
		t0 := time.Now()
		for i := range lines {
			busyLine(p.logger, step, i)
		}
		logging += time.Since(t0)
		if compute > 0 {
			time.Sleep(compute)
		}
	}
	p.stop(b)
	cpu := cpuTime() - cpu0
	res := busyResult{lines: int64(steps * lines)}
	if sampleHeap {
		res.peakMiB = heap.stop()
	} else {
		res.cpuLines, res.logging, res.cpu = res.lines, logging, cpu
	}
	if name == "zap" {
		return res
	}
	got := s.Count(b)
	res.delivered, res.dups = got.Unique(), got.Duplicates
	if !sampleHeap {
		res.cpuDelivered = res.delivered
	}
	lost, _ := p.lost()
	res.uncounted = res.lines - res.delivered - lost
	return res
}
