package spool

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// BenchmarkAppend is the spool's part of a logging call: a record of the
// busy rank's size appended, and settled as an export would settle it, so
// that files are made, filled and removed as in a long run.
func BenchmarkAppend(b *testing.B) {
	s := openTest(b, b.TempDir(), func(c *Config) { c.SegmentBytes = DefaultSegmentBytes; c.MaxBytes = DefaultMaxBytes })
	defer s.Close(context.Background())
	rec := encoded("step progress, a line of the usual size with four fields of the usual kind: step, i, loss and phase; about two hundred bytes in all")
	b.SetBytes(int64(len(rec)))
	cpu0 := processCPU()
	n := 0
	for b.Loop() {
		s.Append(0, rec)
		if n++; n%1024 == 0 {
			s.Settle(1024, false)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
