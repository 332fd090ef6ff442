package pipeline

import (
	"context"
	"errors"
	"testing"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// fakeJournal answers with a verdict per record and notes what is settled.
type fakeJournal struct {
	verdicts []Verdict // by record; Journaled past the end
	n        int
	scopes   int
	settled  int
	kept     int
	closed   bool
}

func (j *fakeJournal) AddScope(int, otlpwire.Scope) { j.scopes++ }
func (j *fakeJournal) Append(int, []byte) Verdict {
	v := Journaled
	if j.n < len(j.verdicts) {
		v = j.verdicts[j.n]
	}
	j.n++
	return v
}
func (j *fakeJournal) Settle(n int, keep bool) {
	if keep {
		j.kept += n
	} else {
		j.settled += n
	}
}
func (j *fakeJournal) Close(context.Context) { j.closed = true }

func (j *fakeJournal) Replay(_ uint64, _ *otlpwire.Request, max int) (int, int) { return max, max }

// The journal sees every accepted record and scope, decides drops at its
// bound and unprotected records, is told each settled one, in order, and
// is told to keep those that fail as the pipeline stops.
func TestJournal(t *testing.T) {
	j := &fakeJournal{verdicts: []Verdict{Journaled, Unjournaled, JournalFull, Journaled}}
	s := &sink{}
	p := newTestPipeline(t, s, func(c *Config) { c.Journal = j })
	sc := p.AddScope(otlpwire.Scope{})
	for range 4 {
		p.Enqueue(sc, encoded("x"), false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := p.Counts()
	if c.Emitted != 4 || c.Exported != 3 || c.Dropped != 1 || c.Unprotected != 1 {
		t.Errorf("counts %+v", c)
	}
	if j.scopes != 1 || j.settled != 3 {
		t.Errorf("journal saw %d scopes, %d settled", j.scopes, j.settled)
	}
	s.mu.Lock()
	s.fail = errors.New("down")
	s.mu.Unlock()
	p.Enqueue(sc, encoded("y"), false)
	_ = p.Shutdown(context.Background())
	p.CloseJournal(context.Background())
	if j.kept != 1 || !j.closed {
		t.Errorf("kept %d, closed %v", j.kept, j.closed)
	}
}
