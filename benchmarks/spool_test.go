package benchmarks

import "testing"

// BenchmarkBusyRankSpool is BenchmarkBusyRank's scenario with compute,
// zaplens with its defaults against the same with the crash-safe spool on
// (zaplens.WithSpool, files in the test's temporary directory):
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

// The spool's pipeline delivers every line, once, as the others do.
func TestSpoolPipelineDelivers(t *testing.T) {
	const lines = 1000
	s := startSink(t)
	p := startPipeline(t, "zaplens-spool", s.GRPC, pipelineConfig{})
	cf := p.ctx(traceCtx)
	for i := range lines {
		info5(p.logger, cf, i)
	}
	p.stop(t)
	got := s.Count(t)
	if got.Records != lines || got.Refused != 0 || got.Duplicates != 0 {
		t.Errorf("sink got %+v, want %d records", got, lines)
	}
	if n, _ := p.lost(); n != 0 {
		t.Errorf("pipeline counted %d lost", n)
	}
}
