package pipeline

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// typedError tells its type as semconv.ErrorType reads it.
type typedError struct{ t string }

func (e typedError) Error() string     { return "failed: " + e.t }
func (e typedError) ErrorType() string { return e.t }

// checkObservation checks an observation of a pipeline whose batches hold
// at most maxBatch records. The identities of Counts and Observation hold
// by construction (Queued, InFlight and HandedOn are worked out from the
// counts and the queue's length), so what is checked is what can still go
// wrong: a count that ran below zero, which wraps, and a queue length that
// disagrees with the counts, which shows as more in flight than one
// request holds.
func checkObservation(t *testing.T, o Observation, maxBatch int) {
	t.Helper()
	var failed uint64
	for _, f := range o.FailedBy {
		failed += f.N
	}
	switch {
	case o.Queued > o.Emitted, o.Waiting > o.Queued, o.HandedOn > o.Emitted,
		o.InFlight > uint64(maxBatch),
		o.DroppedStopped > o.Dropped,
		failed != o.Failed:
		t.Errorf("observation does not add up: %+v", o)
	}
}

// checkCounts checks p's observation as it is now.
func checkCounts(t *testing.T, p *Pipeline) {
	t.Helper()
	var o Observation
	p.Observe(&o)
	checkObservation(t, o, p.cfg.MaxBatchRecords)
}

// An observation adds up at every moment, with producers, exports that
// fail by type, drops for a full queue and after the stop.
func TestObservationAddsUp(t *testing.T) {
	var mu sync.Mutex
	call := 0
	p := New(Config{MaxQueueBytes: 4 << 10, MaxBatchRecords: 10, MaxRequestBytes: 1 << 20,
		ScheduleDelay: time.Millisecond, ExportTimeout: time.Second,
		Export: func(_ context.Context, _ []byte, n int, _ bool) (int, error) {
			mu.Lock()
			call++
			c := call
			mu.Unlock()
			time.Sleep(50 * time.Microsecond)
			switch c % 4 {
			case 1:
				return n, typedError{"refused"}
			case 2:
				return n, errors.New("untyped")
			case 3:
				return 1, typedError{"partial_success"}
			}
			return 0, nil
		}})
	sc := p.AddScope(otlpwire.Scope{})
	rec := encoded("a line of some length")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5000 {
				p.Enqueue(sc, rec, false)
			}
		})
	}
	var o Observation
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		default:
		}
		p.Observe(&o)
		checkObservation(t, o, p.cfg.MaxBatchRecords)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Enqueue(sc, rec, false)
	p.Observe(&o)
	checkObservation(t, o, p.cfg.MaxBatchRecords)
	c := p.Counts()
	if o.Counts != c || o.Emitted != 20001 || o.Dropped == 0 || o.DroppedStopped != 1 || o.Queued != 0 {
		t.Errorf("final observation %+v, counts %+v", o, c)
	}
	types := map[string]bool{}
	for _, f := range o.FailedBy {
		types[f.Type] = true
	}
	if !types["refused"] || !types["partial_success"] || !types[OtherErrorType] || len(types) != 3 {
		t.Errorf("failed by %+v", o.FailedBy)
	}
}

// Capacity: the byte bound at the mean size of what waits, so that
// Waiting/Capacity is how full the queue is by bytes; the record bound,
// less what is in flight, when it is lower.
func TestObservationCapacity(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	// No batch is ready before the 1000th record: the first 100 all wait.
	p := newTestPipeline(t, s, func(c *Config) { c.MaxQueueBytes = 100 << 10; c.MaxBatchRecords = 1000 })
	var o Observation
	p.Observe(&o)
	if o.Capacity != 100<<10/NominalRecordBytes {
		t.Errorf("empty queue: capacity %d", o.Capacity)
	}
	sc := p.AddScope(otlpwire.Scope{})
	rec := encoded("x")
	for range 100 {
		p.Enqueue(sc, rec, false)
	}
	p.Observe(&o)
	p.mu.Lock()
	perRecord := uint64(p.q.bytes / p.q.records)
	p.mu.Unlock()
	if want := uint64(100<<10) / perRecord; o.Capacity < want-1 || o.Capacity > want+1 || o.Waiting != 100 {
		t.Errorf("capacity %d, want about %d; waiting %d", o.Capacity, want, o.Waiting)
	}
	for p.Enqueue(sc, rec, false) {
	}
	p.Observe(&o)
	if o.Waiting+o.InFlight < o.Capacity-1 || o.Waiting > o.Capacity+1 {
		t.Errorf("full queue: waiting %d, in flight %d, capacity %d", o.Waiting, o.InFlight, o.Capacity)
	}
	close(s.block)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Observe(&o)
	if want := uint64(100<<10) / perRecord; o.Waiting != 0 || o.Capacity < want-1 || o.Capacity > want+1 {
		t.Errorf("drained: capacity %d, want about %d from the records handed on", o.Capacity, want)
	}

	s2 := &sink{block: make(chan struct{})}
	defer close(s2.block)
	p2 := newTestPipeline(t, s2, func(c *Config) { c.MaxQueueRecords = 50; c.MaxBatchRecords = 10 })
	sc2 := p2.AddScope(otlpwire.Scope{})
	for range 50 {
		p2.Enqueue(sc2, rec, false)
	}
	waitFor(t, "the first batch of 10 in the blocked export", func() bool { p2.Observe(&o); return o.InFlight > 0 })
	if o.InFlight != 10 || o.Waiting != 40 || o.Capacity != 40 {
		t.Errorf("record bound: in flight %d, waiting %d, capacity %d; want 10, 40, 40", o.InFlight, o.Waiting, o.Capacity)
	}
}
