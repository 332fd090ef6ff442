package benchmarks

import (
	"context"
	"testing"
)

// TestBridgesDeliver checks that every bridge of the benchmarks does the
// work they measure: each workload's lines reach the exporter, or do not
// where the bridge filters them.
func TestBridgesDeliver(t *testing.T) {
	const lines = 100
	for _, c := range contenders {
		if c.name == "zap" {
			continue
		}
		for _, w := range workloads {
			t.Run(c.name+"/"+w.name, func(t *testing.T) {
				p, exp := newCountingProvider()
				defer p.Shutdown(context.Background())
				l := w.logger(newLogger(c.core(newBaseCore(), p, w.prefixes)))
				cf := c.ctx(traceCtx)
				for i := range lines {
					w.line(l, cf, i)
				}
				if err := p.ForceFlush(context.Background()); err != nil {
					t.Fatal(err)
				}
				want := int64(lines)
				if c.name != "official" && w.floor == nil {
					want = 0 // filtered by level or logger name
				}
				if got := exp.records.Load(); got != want {
					t.Errorf("exported %d records, want %d", got, want)
				}
			})
		}
	}
}
