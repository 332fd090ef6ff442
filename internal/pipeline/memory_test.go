package pipeline

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// lossyJournal is a memJournal that, at the record numbered at, finds its
// copies lost from record 0 on, as a spool whose file was cut does: it
// reads what the queue still holds, and gives up its copy of those below
// bare.
type lossyJournal struct {
	memJournal
	mem      Memory
	at, bare uint64
	bareFrom uint64 // the first record given up; those before it are still the journal's
	n        uint64
	queued   []uint64 // the numbers the queue held at the loss
	wrong    []uint64 // of those, the ones whose bytes were not the record's
	deferred uint64   // records on disk only at the loss: see spill
}

func (j *lossyJournal) UseMemory(m Memory) { j.mem = m }

func (j *lossyJournal) Append(scope int, rec []byte) Verdict {
	if j.n == j.at {
		j.deferred = j.mem.(memory).p.deferred
		j.mem.Queued(0, func(i uint64, _ int, rec []byte) bool {
			j.queued = append(j.queued, i)
			if !bytes.Equal(rec, j.held[i].payload) {
				j.wrong = append(j.wrong, i)
			}
			return true
		})
		j.mem.Bare(j.bareFrom, j.bare)
	}
	j.n++
	return j.memJournal.Append(scope, rec)
}

// The journal reads the records the queue holds, numbered as it numbers
// them (those of the export in flight are not the queue's any more), and
// those it gives up go on in memory, counted unprotected, never spilled.
func TestMemoryQueuedAndBare(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	j := &lossyJournal{at: 30, bare: 20}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxBatchRecords, c.Journal = 10, j })
	p.AddScope(otlpwire.Scope{})
	enqueueLines(t, p, 0, 10) // a batch: the exporter takes it, and waits
	waitFor(t, "the first export", func() bool { return s.exports() == 1 })
	enqueueLines(t, p, 10, 40)
	if want := seq(10, 30); fmt.Sprint(j.queued) != fmt.Sprint(want) || len(j.wrong) > 0 {
		t.Errorf("the queue held %v (bytes wrong for %v), want %v", j.queued, j.wrong, want)
	}
	if c := p.Counts(); c.Unprotected != 10 {
		t.Errorf("counts %+v: want the 10 records given up, 10 to 19, unprotected", c)
	}
	p.mu.Lock()
	spillable := p.spillable()
	p.mu.Unlock()
	if spillable {
		t.Error("records the journal gave up may be spilled to it")
	}
	close(s.block)
	_ = p.Flush(t.Context())
	checkLines(t, s, 40)
}

// Records given up from a number on are counted from there: those before
// it the journal holds still (in another file). All the queue holds up to
// the last given up stays in memory, never spilled.
func TestMemoryBareFrom(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	j := &lossyJournal{at: 30, bare: 20, bareFrom: 15}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxBatchRecords, c.Journal = 10, j })
	p.AddScope(otlpwire.Scope{})
	enqueueLines(t, p, 0, 10) // a batch: the exporter takes it, and waits
	waitFor(t, "the first export", func() bool { return s.exports() == 1 })
	enqueueLines(t, p, 10, 40)
	p.mu.Lock()
	spillable := p.spillable()
	p.mu.Unlock()
	if c := p.Counts(); c.Unprotected != 5 || spillable {
		t.Errorf("counts %+v, spillable %v: want the 5 records given up, 15 to 19, unprotected, and none spilled", c, spillable)
	}
	close(s.block)
	_ = p.Flush(t.Context())
	checkLines(t, s, 40)
}

func seq(from, to uint64) (out []uint64) {
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// Records spilled to the journal (on disk only) are not the queue's: the
// queue's first record is numbered past them, and each number read is
// the record's own.
func TestMemoryQueuedAfterSpill(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	j := &lossyJournal{at: 250}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxQueueBytes, c.MaxBatchRecords, c.Journal = 2<<10, 50, j })
	p.AddScope(otlpwire.Scope{})
	enqueueLines(t, p, 0, 50) // a batch: the exporter takes it, and waits
	waitFor(t, "the first export", func() bool { return s.exports() == 1 })
	enqueueLines(t, p, 50, 300) // spilled as the queue fills
	if j.deferred == 0 {
		close(s.block)
		t.Fatalf("nothing spilled before record %d: the test wants records on disk only", j.at)
	}
	if len(j.queued) == 0 || len(j.wrong) > 0 || j.queued[len(j.queued)-1] != j.at-1 ||
		fmt.Sprint(j.queued) != fmt.Sprint(seq(j.queued[0], j.at)) {
		t.Errorf("the queue held %v (bytes wrong for %v), %d spilled: want the records up to %d, each its own", j.queued, j.wrong, j.deferred, j.at-1)
	}
	close(s.block)
	_ = p.Flush(t.Context())
	checkLines(t, s, 300)
}
