package zaplens

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// The pipeline is the SDK's BatchProcessor between two counting wrappers:
//
//	logger -> gate (counts, admits) -> BatchProcessor -> tally (counts) -> exporter
//
// The BatchProcessor on its own overwrites its oldest record when full and
// says so only through the SDK's internal logger, with no count a program
// can read, and its OnEmit cannot wait. The gate admits a record only while
// fewer than the queue size are in flight (admitted, not yet exported or
// failed), so the BatchProcessor's queue, of the same size, never overflows
// and every loss happens, and is counted, here.

// gate is the Processor in front of the BatchProcessor.
type gate struct {
	next     sdklog.Processor
	counts   *counters
	capacity int64
	wait     time.Duration // 0: drop at once when full
	inflight atomic.Int64  // admitted and not yet settled by the tally
	stopped  atomic.Bool
	space    signal
	lastErr  atomic.Pointer[error] // the latest export error, for the report
}

func newGate(next sdklog.Processor, counts *counters, capacity int, wait time.Duration) *gate {
	return &gate{next: next, counts: counts, capacity: int64(capacity), wait: wait}
}

// Enabled accepts everything: filtering is the bridge's job, done before a
// record is built.
func (g *gate) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }

// OnEmit never blocks on the network: it either admits the record into the
// queue, waits for room for at most the configured bound, or drops it.
func (g *gate) OnEmit(ctx context.Context, r *sdklog.Record) error {
	g.counts.emitted.Add(1)
	if g.stopped.Load() || !g.admit() {
		g.counts.dropped.Add(1)
		return nil
	}
	return g.next.OnEmit(ctx, r)
}

func (g *gate) admit() bool {
	if g.reserve() {
		return true
	}
	if g.wait <= 0 {
		return false
	}
	return g.waitForRoom()
}

// reserve takes a place in the queue if there is one. A compare-and-swap
// loop rather than add-then-undo, so that concurrent emitters never see a
// count above capacity.
func (g *gate) reserve() bool {
	for {
		n := g.inflight.Load()
		if n >= g.capacity {
			return false
		}
		if g.inflight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// waitForRoom waits, at most g.wait, for the tally to settle records.
func (g *gate) waitForRoom() bool {
	timer := time.NewTimer(g.wait)
	defer timer.Stop()
	for {
		// Take the channel before re-checking, so that a release between
		// the check and the select still wakes us.
		ch := g.space.channel()
		if g.reserve() {
			return true
		}
		if g.stopped.Load() {
			return false
		}
		select {
		case <-ch:
		case <-timer.C:
			return g.reserve()
		}
	}
}

// settle is called by the tally when n records have left the pipeline.
func (g *gate) settle(n int) {
	g.inflight.Add(-int64(n))
	if g.wait > 0 {
		g.space.broadcast()
	}
}

func (g *gate) Shutdown(ctx context.Context) error {
	g.stop()
	return g.next.Shutdown(ctx)
}

// stop turns away every later record and wakes the logging calls waiting
// for room, which then drop theirs.
func (g *gate) stop() {
	g.stopped.Store(true)
	g.space.broadcast()
}

func (g *gate) ForceFlush(ctx context.Context) error { return g.next.ForceFlush(ctx) }

func (g *gate) lastError() error {
	if p := g.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// signal wakes every waiter at once; a waiter takes the current channel and
// a broadcast closes it.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) channel() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) broadcast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// tally is the Exporter behind the BatchProcessor. It counts what the real
// exporter delivered and what it failed, and frees the records' places in
// the gate.
type tally struct {
	sdklog.Exporter
	gate *gate
}

// Export swallows the error after counting it. The BatchProcessor would hand
// it to otel.Handle, which by default prints one line per failed batch: the
// loss report tells the same thing once per interval instead.
func (t *tally) Export(ctx context.Context, records []sdklog.Record) error {
	err := t.Exporter.Export(ctx, records)
	n := len(records)
	failed := failedRecords(err, n)
	t.gate.counts.exported.Add(uint64(n - failed))
	t.gate.counts.failed.Add(uint64(failed))
	if err != nil {
		t.gate.lastErr.Store(&err)
	}
	t.gate.settle(n)
	return nil
}

// failedRecords tells how many of n records an export error lost. A partial
// success from the collector rejects only some; otlploggrpc reports it as an
// error of an internal type with a RejectedItems field, read by reflection
// because the type is not exported.
func failedRecords(err error, n int) int {
	if err == nil {
		return 0
	}
	rejected, other := partialRejections(err)
	if other || rejected > int64(n) {
		return n
	}
	return int(rejected)
}

// partialRejections sums the rejected counts of the partial successes in
// err's tree, and says whether anything else is in it.
func partialRejections(err error) (rejected int64, other bool) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			r, o := partialRejections(e)
			rejected += r
			other = other || o
		}
		return rejected, other
	}
	v := reflect.ValueOf(err)
	if v.Kind() == reflect.Struct && v.Type().Name() == "PartialSuccess" {
		if f := v.FieldByName("RejectedItems"); f.IsValid() && f.Kind() == reflect.Int64 {
			return f.Int(), false
		}
	}
	return 0, true
}
