package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/pipeline"
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

// BenchmarkShip is a restarted process sending what one that died left:
// four files' worth of the busy rank's records, of two scopes, to a
// collector that takes every request at once.
func BenchmarkShip(b *testing.B) {
	files := fullFiles(b, 4)
	export := func(context.Context, []byte, int, bool) (int, error) { return 0, nil }
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		sh := Ship(ShipConfig{Dir: dir, Export: export, MaxBatchRecords: 512, MaxRequestBytes: 4 << 20,
			ExportTimeout: time.Minute, Once: true})
		<-sh.Done()
		if c := sh.Counts(); c.Files != uint64(len(files)) || c.Left() != 0 || c.Exported == 0 {
			b.Fatalf("counts %+v", c)
		}
	}
}

// fullFiles is the contents, by name, of n default-size files full of
// records that a spool closed without settling.
func fullFiles(b *testing.B, n int) map[string][]byte {
	dir := b.TempDir()
	s := openTest(b, dir, func(c *Config) { c.SegmentBytes = DefaultSegmentBytes; c.MaxBytes = DefaultMaxBytes })
	rec := encoded("step progress, a line of the usual size with four fields of the usual kind: step, i, loss and phase; about two hundred bytes in all")
	for i := 0; i < n*DefaultSegmentBytes/frameSize(len(rec))-n; i++ {
		for s.Append(i%2, rec) != pipeline.Journaled {
			time.Sleep(time.Millisecond) // no file ready yet: the housekeeper makes them
		}
	}
	s.Close(context.Background())
	out := map[string][]byte{}
	for _, path := range segFiles(b, dir) {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		out[filepath.Base(path)] = data
	}
	return out
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkNextFile is what a logging call pays, once per file, when the
// housekeeper is late: making a default-size file itself, or emptying a
// full one that was settled.
func BenchmarkNextFile(b *testing.B) {
	rec := encoded("step progress, a line of the usual size with four fields of the usual kind: step, i, loss and phase; about two hundred bytes in all")
	b.Run("make", func(b *testing.B) {
		dir := b.TempDir()
		i := 0
		for b.Loop() {
			i++
			seg, err := makeSegment(dir, segName("1-1-", i), DefaultSegmentBytes, 1, 1, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			seg.close(true)
			b.StartTimer()
		}
	})
	b.Run("reuse", func(b *testing.B) {
		dir := b.TempDir()
		seg, err := makeSegment(dir, segName("1-1-", 0), DefaultSegmentBytes, 1, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer seg.close(true)
		i := 0
		for b.Loop() {
			b.StopTimer()
			for seg.off+frameSize(len(rec)) <= len(seg.mem) {
				seg.off = putFrame(seg.mem, seg.off, 0, rec)
			}
			i++
			b.StartTimer()
			if err := seg.recycle(dir, segName("1-1-", i), 1, 1, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNextFileUnderFsyncLoad is BenchmarkNextFile on a disk made slow
// by writers beside it, each writing 1 MiB and fsyncing it in a loop in
// the same file system: what a logging call may wait, holding the
// pipeline's lock, when the housekeeper is late. It reports the worst
// call (max-ms) and the median (p50-ms).
func BenchmarkNextFileUnderFsyncLoad(b *testing.B) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	load := b.TempDir()
	for w := range 4 {
		wg.Go(func() {
			f, err := os.Create(filepath.Join(load, fmt.Sprint(w)))
			if err != nil {
				b.Error(err)
				return
			}
			defer f.Close()
			buf := make([]byte, 1<<20)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				f.WriteAt(buf, int64(i%64)<<20)
				f.Sync()
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(time.Second) // the load under way
	rec := encoded("step progress, a line of the usual size with four fields of the usual kind: step, i, loss and phase; about two hundred bytes in all")
	b.Run("make", func(b *testing.B) {
		dir := b.TempDir()
		var lat []time.Duration
		i := 0
		for b.Loop() {
			i++
			start := time.Now()
			seg, err := makeSegment(dir, segName("1-1-", i), DefaultSegmentBytes, 1, 1, nil)
			lat = append(lat, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			seg.close(true)
			b.StartTimer()
		}
		reportLatencies(b, lat)
	})
	b.Run("syncdir", func(b *testing.B) { // what a call adds with WithSpoolSync when it makes a file
		dir := b.TempDir()
		var lat []time.Duration
		for b.Loop() {
			start := time.Now()
			syncDir(dir)
			lat = append(lat, time.Since(start))
		}
		reportLatencies(b, lat)
	})
	b.Run("reuse", func(b *testing.B) {
		dir := b.TempDir()
		seg, err := makeSegment(dir, segName("1-1-", 0), DefaultSegmentBytes, 1, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer seg.close(true)
		var lat []time.Duration
		i := 0
		for b.Loop() {
			b.StopTimer()
			for seg.off+frameSize(len(rec)) <= len(seg.mem) {
				seg.off = putFrame(seg.mem, seg.off, 0, rec)
			}
			i++
			b.StartTimer()
			start := time.Now()
			if err := seg.recycle(dir, segName("1-1-", i), 1, 1, nil); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		reportLatencies(b, lat)
	})
}

func reportLatencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)-1])/1e6, "max-ms")
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "p50-ms")
}
