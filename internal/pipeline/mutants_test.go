package pipeline

import (
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// Where a one-character mistake in the pipeline would pass the other
// tests (internal/pipeline/MUTANTS.md).

// With a journal, the queue keeps in memory only what the exporter's next
// two requests take, however large MaxQueueBytes: through an outage the
// rest waits in the journal's files, so that it costs the process no more
// memory than a healthy run. Every record is then delivered once, in order.
func TestJournalBoundsTheQueueInMemory(t *testing.T) {
	const requestBytes = 8 << 10
	s := &sink{block: make(chan struct{})}
	p, _ := journaledPipeline(t, s, func(c *Config) {
		c.MaxQueueBytes, c.MaxRequestBytes = 1<<20, requestBytes
	})
	most := 0
	for i := range 2000 {
		enqueueLines(t, p, i, i+1)
		p.mu.Lock()
		most = max(most, p.q.bytes)
		p.mu.Unlock()
	}
	if most > spillBytes(requestBytes) {
		t.Errorf("the queue held %d bytes in memory while the collector was away, want %d at most (two requests)", most, spillBytes(requestBytes))
	}
	close(s.block)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkLines(t, s, 2000)
}

// A record that went on in memory only (the journal stepped aside) and was
// delivered long ago does not keep the queue from spilling to the journal
// again: through a later outage no record is dropped while the journal
// has room, and each is delivered once, in order.
func TestSpillsAgainAfterAnUnprotectedRecordLeft(t *testing.T) {
	s := &sink{}
	p, j := journaledPipeline(t, s, nil)
	enqueueLines(t, p, 0, 300)
	j.aside.Store(true)
	enqueueLines(t, p, 300, 301)
	j.aside.Store(false)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.block = make(chan struct{}) // the collector goes away
	s.mu.Unlock()
	var back sync.Once
	comeBack := func() { back.Do(func() { close(s.block) }) }
	t.Cleanup(comeBack) // before the shutdown, should the test end early
	enqueueLines(t, p, 301, 351)
	var o Observation
	waitFor(t, "a batch in the blocked export", func() bool { p.Observe(&o); return o.InFlight == 50 })
	enqueueLines(t, p, 351, 1000) // past the queue's room, again and again: spilled each time
	comeBack()
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := p.Counts(); c.Exported != 1000 || c.Dropped != 0 || c.Unprotected != 1 {
		t.Errorf("counts %+v: want all 1000 delivered, none dropped, 1 unprotected", c)
	}
	checkLines(t, s, 1000)
}

// A batch is ready when the records waiting take half a request's bytes,
// to the byte: they go then, not at the schedule delay.
func TestBatchReadyAtHalfARequestToTheByte(t *testing.T) {
	rec := encoded(strings.Repeat("x", 1100))
	queued := len(binary.AppendUvarint(binary.AppendUvarint(nil, 0), uint64(len(rec)))) + len(rec)
	s := &sink{}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxRequestBytes = 2 * 3 * queued })
	sc := p.AddScope(otlpwire.Scope{})
	for range 3 {
		p.Enqueue(sc, rec, false)
	}
	waitFor(t, "the batch exported", func() bool { return s.count() == 3 })
}

// FlushWaiting is zero once every flush is done: a flush that finished is
// not a collector that does not answer.
func TestFlushWaitingZeroOnceDone(t *testing.T) {
	p := newTestPipeline(t, &sink{}, nil)
	sc := p.AddScope(otlpwire.Scope{})
	p.Enqueue(sc, encoded("a"), false)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w := p.FlushWaiting(); w != 0 {
		t.Errorf("FlushWaiting %v after the flush was done, want 0", w)
	}
}

// A record whose values were cut to fit a request is counted in Cut, and
// in the other counts as any record is.
func TestCutCounted(t *testing.T) {
	p := newTestPipeline(t, &sink{}, nil)
	sc := p.AddScope(otlpwire.Scope{})
	p.Enqueue(sc, encoded("cut"), true)
	p.Enqueue(sc, encoded("whole"), false)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := p.Counts(); c.Cut != 1 || c.Emitted != 2 || c.Exported != 2 {
		t.Errorf("counts %+v: want 1 cut of 2 emitted, both exported", c)
	}
}
