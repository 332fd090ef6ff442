package pipeline

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// Edges that mutation testing found no test of: the largest record, an
// error that failed nothing, the journal's scope numbers.

// A record of MaxRecordBytes goes in a request under MaxRequestBytes with
// its scope, of up to the kilobyte kept for it, however large the
// resource.
func TestLargestRecordFits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resource string
		scope    string
	}{
		{"a large resource", strings.Repeat("r", 1500), "a scope"},
		{"a large scope", "r", strings.Repeat("s", 900)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			p := newTestPipeline(t, s, func(c *Config) {
				c.MaxRequestBytes = 16 << 10
				c.Resource = otlpwire.NewResource([]attribute.KeyValue{attribute.String("k", tc.resource)}, "")
			})
			sc := p.AddScope(otlpwire.NewScope(tc.scope, "v1", "", nil))
			rec := encoded("")
			for n := 0; len(rec) < p.MaxRecordBytes(); n++ {
				rec = encoded(strings.Repeat("x", n))
			}
			if len(rec) != p.MaxRecordBytes() {
				t.Fatalf("no record of %d bytes: %d", p.MaxRecordBytes(), len(rec))
			}
			p.Enqueue(sc, rec, false)
			if err := p.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			sizes := slices.Clone(s.sizes)
			s.mu.Unlock()
			if len(sizes) != 1 || sizes[0] > 16<<10 {
				t.Errorf("requests of %v bytes: want one under %d", sizes, 16<<10)
			}
		})
	}
}

// An export that returns an error with nothing rejected (a warning that
// came with the acknowledgement) fails no record, of any type.
func TestErrorWithNothingRejected(t *testing.T) {
	p := New(Config{MaxQueueBytes: 1 << 20, MaxBatchRecords: 10, MaxRequestBytes: 1 << 20,
		ScheduleDelay: time.Hour, ExportTimeout: time.Second,
		Export: func(context.Context, []byte, int, bool) (int, error) { return 0, errors.New("a warning") }})
	defer p.Shutdown(context.Background())
	sc := p.AddScope(otlpwire.Scope{})
	p.Enqueue(sc, encoded("x"), false)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var o Observation
	p.Observe(&o)
	if o.Exported != 1 || o.Failed != 0 || len(o.FailedBy) != 0 {
		t.Errorf("observation %+v: want the record exported, no failure of any type", o)
	}
}

// scopeJournal notes the numbers it is told scopes by.
type scopeJournal struct {
	orderJournal
	numbers []int
}

func (j *scopeJournal) AddScope(i int, _ otlpwire.Scope) { j.numbers = append(j.numbers, i) }

// The journal is told each scope by the number Enqueue takes.
func TestJournalScopeNumbers(t *testing.T) {
	j := &scopeJournal{}
	p := newTestPipeline(t, &sink{}, func(c *Config) { c.Journal = j })
	a := p.AddScope(otlpwire.NewScope("a", "", "", nil))
	b := p.AddScope(otlpwire.NewScope("b", "", "", nil))
	p.mu.Lock()
	defer p.mu.Unlock()
	if a != 0 || b != 1 || len(j.numbers) != 2 || j.numbers[0] != a || j.numbers[1] != b {
		t.Errorf("scopes %d and %d, the journal told %v", a, b, j.numbers)
	}
}
