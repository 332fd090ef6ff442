package benchmarks

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCall is the logging call as users make it: case 1's line (Info,
// 5 fields and a context) through each contender's tee over the user's
// JSON core, each bridge on its own default pipeline exporting over
// OTLP/gRPC to cmd/otlpsink in another process:
// BenchmarkCall/bridge=NAME. bridge=zaplens-noids is zaplens with the ids
// left out of the JSON core's line, the official bridge's output: like for
// like, what zaplens's bridge costs beside the ids it prints.
//
// ns/op, B/op and allocs/op are testing's own, over the loop: the wall time
// of a call, and the allocations of the whole process while the loop runs
// (the export goroutine's included); allocs/op is rounded down to a whole
// number, so loop-allocs/op gives the same count unrounded. runq-ns/op is the time, per call,
// that the process's threads spent runnable but waiting for a CPU during
// the loop: what other processes (the receiver among them) took from the
// wall time. caller-cpu-ns/op and caller-runq-ns/op split the calling
// goroutine's own wall time (it holds its thread for the loop): its time on
// a CPU, and its time runnable but waiting for one. After the loop the
// pipeline is shut
// down (every queued line sent and acknowledged) and, from the first line
// to the end of that flush, it reports:
//
//   - cpu-ns/op: the process's CPU time (getrusage: all goroutines, the
//     exporter's and the GC's included) per line logged;
//   - cpu-ns/delivered: the same CPU time per line the receiver counted;
//   - total-allocs/op: the process's allocations per line, the flush's
//     included;
//   - receiver-cpu-ns/delivered: the receiver process's own CPU time over
//     the same span, per line it counted: decoding the requests as a
//     collector does. It is not the contender's, but on a machine of few
//     cores it is what the caller waits behind (runq-ns/op);
//   - %delivered: the lines the receiver counted, of those logged, each
//     once however often it arrived; dup/1k: the lines that arrived more
//     than once, per 1,000 logged.
//
// Then the same lines are logged again, untimed, through a fresh pipeline
// with the heap sampled every 2 ms, for peak-heap-MiB: the highest heap in
// use above the heap before the pipeline was built. The sampler's wake-ups
// cost CPU of their own, which is why it does not run during the measured
// pass; %delivered and dup/1k cover both passes.
//
// With ZAPLENS_BENCH_HEAP=0 the heap pass is left out, and peak-heap-MiB
// with it: for a count of instructions per line under valgrind (see
// docs/costs.md), where the sampler, woken by the clock, would run
// fifty times as often per line.
//
// With ZAPLENS_BENCH_HTTP=1 zaplens sends over OTLP/HTTP (protobuf) to the
// same receiver; the official pipeline stays on OTLP/gRPC.
//
// With ZAPLENS_BENCH_PAUSE_SINK=1 the receiver is paused (SIGSTOP) for the
// timed loop and resumed after it. Every exporter then blocks on it, so
// nearly all export work waits until the loop ends: the call with no
// export competing, a lower bound for every contender (not a receiver on
// another machine, where each exporter would still compete with its
// caller). The official pipeline's queue is then made to hold every line
// of the loop (-benchtime=Nx), so that it drops none. Keep N to a few
// hundred thousand: that queue is allocated whole (about 1.3 KB a line),
// and a loop longer than the exporters' 10 s timeout turns their blocked
// exports into retries.
func BenchmarkCall(b *testing.B) {
	pauseSink := os.Getenv("ZAPLENS_BENCH_PAUSE_SINK") != ""
	noHeapPass := os.Getenv("ZAPLENS_BENCH_HEAP") == "0"
	cfg := pipelineConfig{http: os.Getenv("ZAPLENS_BENCH_HTTP") != ""}
	if pauseSink {
		cfg.officialQueue = benchLines(b)
	}
	for _, name := range append(pipelineNames, "zaplens-noids") {
		b.Run("bridge="+name, func(b *testing.B) {
			b.ReportAllocs()
			s := startSink(b)
			p := startPipeline(b, name, s, cfg)
			cf := p.ctx(traceCtx)
			rx0 := s.Count(b)
			if pauseSink {
				s.pause(b)
			}
			runtime.LockOSThread()
			m0, cpu0, w0 := mallocs(), cpuTime(), runqWait()
			tcpu0, twait0 := threadSched()
			n := 0
			for b.Loop() {
				info5(p.logger, cf, n)
				n++
			}
			tcpu, twait := threadSched()
			loopAllocs := mallocs() - m0
			wait := runqWait() - w0
			runtime.UnlockOSThread()
			if pauseSink {
				s.resume(b)
			}
			p.stop(b)
			cpu := cpuTime() - cpu0
			allocs := mallocs() - m0
			var got sinkTotals
			if name != "zap" {
				got = s.Count(b)
			}

			// The heap pass.
			peak := -1.0
			if !noHeapPass {
				heap := startHeapPeak()
				p = startPipeline(b, name, s, cfg)
				cf = p.ctx(traceCtx)
				for i := range n {
					info5(p.logger, cf, i)
				}
				p.stop(b)
				peak = heap.stop()
			}

			b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
			b.ReportMetric(float64(wait.Nanoseconds())/float64(n), "runq-ns/op")
			b.ReportMetric(float64((tcpu-tcpu0).Nanoseconds())/float64(n), "caller-cpu-ns/op")
			b.ReportMetric(float64((twait-twait0).Nanoseconds())/float64(n), "caller-runq-ns/op")
			b.ReportMetric(float64(loopAllocs)/float64(n), "loop-allocs/op")
			b.ReportMetric(float64(allocs)/float64(n), "total-allocs/op")
			if peak >= 0 {
				b.ReportMetric(peak, "peak-heap-MiB")
			}
			if name == "zap" {
				return // nothing to deliver
			}
			if delivered := got.Unique(); delivered > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(delivered), "cpu-ns/delivered")
				b.ReportMetric(float64(got.CPUNanos-rx0.CPUNanos)/float64(delivered), "receiver-cpu-ns/delivered")
			}
			both := s.Count(b)
			logged := 2 * n
			if noHeapPass {
				logged = n
			}
			b.ReportMetric(100*float64(both.Unique())/float64(logged), "%delivered")
			b.ReportMetric(1000*float64(both.Duplicates)/float64(logged), "dup/1k")
		})
	}
}

// benchLines is the count of -test.benchtime=Nx, which a paused receiver's
// run needs ahead.
func benchLines(b *testing.B) int {
	v := flag.Lookup("test.benchtime").Value.String()
	n, err := strconv.Atoi(strings.TrimSuffix(v, "x"))
	if !strings.HasSuffix(v, "x") || err != nil || n <= 0 {
		b.Fatalf("ZAPLENS_BENCH_PAUSE_SINK needs -test.benchtime=Nx, not %q", v)
	}
	return n
}
