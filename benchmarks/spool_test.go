package benchmarks

import "testing"

// BenchmarkBusyRankSpool is BenchmarkBusyRank's scenario with compute,
// zaplens with its defaults against the same with the crash-safe spool on
// (otlplog.WithSpool, files in the test's temporary directory):
// BenchmarkBusyRankSpool/bridge=NAME. Run with ZAPLENS_BENCH_BUSY=full
// for the figures (10 × 10,000 lines, 0.5 s of compute).
func BenchmarkBusyRankSpool(b *testing.B) {
	steps, lines, pause := busySize()
	for _, br := range []string{"zaplens", "zaplens-spool"} {
		b.Run("bridge="+br, func(b *testing.B) {
			var res busyResult
			for b.Loop() {
				res.add(busyRun(b, br, steps, lines, pause, false))
				res.add(busyRun(b, br, steps, lines, pause, true))
			}
			res.report(b, true)
		})
	}
}
