package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// memJournal keeps records in memory and reads them back, as the spool
// does from its files; it steps aside while aside is set.
type memJournal struct {
	aside   atomic.Bool
	held    []heldRecord // by number; nil payload: not held
	settled int
	kept    int
}

func (j *memJournal) AddScope(int, otlpwire.Scope) {}
func (j *memJournal) Append(scope int, rec []byte) Verdict {
	h := heldRecord{scope: scope}
	v := Unjournaled
	if !j.aside.Load() {
		h.payload, v = bytes.Clone(rec), Journaled
	}
	j.held = append(j.held, h)
	return v
}
func (j *memJournal) Replay(from uint64, req *otlpwire.Request, max int) (n, missing int) {
	for ; n < max && from+uint64(n) < uint64(len(j.held)); n++ {
		if h := j.held[from+uint64(n)]; h.payload == nil {
			missing++
		} else if !req.Add(h.scope, h.payload) {
			break
		}
	}
	return n, missing
}
func (j *memJournal) Settle(n int, keep bool) {
	j.settled += n
	if keep {
		j.kept += n
	}
}
func (j *memJournal) Close(context.Context) {}

// journaledPipeline is a pipeline with a memJournal, a queue of 4 KiB
// (about 70 records) and batches of 50, exporting to s.
func journaledPipeline(t *testing.T, s *sink, mod func(*Config)) (*Pipeline, *memJournal) {
	t.Helper()
	j := &memJournal{}
	p := newTestPipeline(t, s, func(c *Config) {
		c.MaxQueueBytes, c.MaxBatchRecords, c.Journal = 4<<10, 50, j
		if mod != nil {
			mod(c)
		}
	})
	p.AddScope(otlpwire.Scope{})
	return p, j
}

func enqueueLines(t *testing.T, p *Pipeline, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if !p.Enqueue(0, encoded(fmt.Sprintf("line %05d", i)), false) {
			t.Fatalf("line %d dropped; counts %+v", i, p.Counts())
		}
	}
}

// checkLines fails unless s received lines 0 to n-1, each once, in order.
func checkLines(t *testing.T, s *sink, n int) {
	t.Helper()
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("line %05d", i)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Equal(s.bodies, want) {
		t.Fatalf("received %d records, want lines 0 to %d, each once, in order; first ones %q", len(s.bodies), n-1, s.bodies[:min(5, len(s.bodies))])
	}
}

// A record that comes while the journal has stepped aside, with records
// waiting in its files only, goes on in memory: it is in neither place
// otherwise, and lost though the queue had room for it.
func TestSteppedAsideWhileSpilled(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p, j := journaledPipeline(t, s, func(c *Config) { c.ScheduleDelay = time.Millisecond })
	enqueueLines(t, p, 0, 300) // a batch in flight, the rest past the queue's room
	j.aside.Store(true)
	enqueueLines(t, p, 300, 310)
	j.aside.Store(false)
	enqueueLines(t, p, 310, 320)
	close(s.block)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := p.Counts(); c.Exported != 320 || c.Failed != 0 || c.Unprotected != 10 {
		t.Errorf("counts %+v: want all 320 delivered, 10 unprotected", c)
	}
	checkLines(t, s, 320)
}

// Records handed on to an export are counted so once: an export put back
// for want of an answer does not take them out of the count again, which
// the metrics report as a counter (otel.sdk.processor.log.processed).
func TestHandedOnNeverGoesBack(t *testing.T) {
	s := &sink{fail: errors.New("collector down")}
	p, _ := journaledPipeline(t, s, func(c *Config) { c.ScheduleDelay = time.Millisecond })
	enqueueLines(t, p, 0, 10)
	var o Observation
	most := uint64(0)
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
		p.Observe(&o)
		if o.HandedOn < most {
			t.Fatalf("records handed on went back from %d: %+v", most, o)
		}
		most = o.HandedOn
	}
	if s.mu.Lock(); s.calls < 2 {
		t.Errorf("%d exports: want the failed one sent again", s.calls)
	}
	s.mu.Unlock()
	if c := p.Counts(); c.Failed != 0 || c.Queued != 10 || most == 0 {
		t.Errorf("counts %+v, %d handed on: want the 10 records queued, and handed on", c, most)
	}
}
