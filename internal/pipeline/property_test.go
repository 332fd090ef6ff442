package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// The pipeline's accounting, driven at random: records enqueued by the test
// and by a producer beside it, exports delivered, refused for good, failed,
// partly rejected, panicking, hanging past their timeout, answered with a
// rejected count out of range, flushes with short deadlines, a journal that
// steps aside, is full, or cannot read a record back now and then, and a
// shutdown, in whatever order the seed and the scheduler give. At every
// read the counts add up and no count goes back. At the end, read from the
// trail of exports and settlements in the order they happened: every
// request starts at the oldest record not settled and holds the records
// after it in order, but for those the journal could not give back; a
// request no collector answered for is either settled, kept, or put back
// and sent again from its first record, and no record is in two requests
// the collector answered for; the journal is told each record's fate once,
// in order, kept exactly when no collector answered for it; only the
// journal's bound and the shutdown drop a record; and the counts are what
// the collector and the journal saw.

// answer is what the collector does with one request.
type answer int

const (
	delivered answer = iota
	refused          // for good: the collector's verdict
	failed           // no verdict: a later process may send them
	partial          // some rejected
	panicked
	hung       // until the export's context ends
	outOfRange // a rejected count below zero or above n
	answers
)

// refusal is a collector's verdict on the records, as HTTP 400 is.
type refusal struct{}

func (refusal) Error() string  { return "refused" }
func (refusal) Answered() bool { return true }

// call is one export as the collector saw it.
type call struct {
	ids      []int
	rejected int // as the pipeline takes it: kept between 0 and n
	keep     bool
	final    bool // a flush or the shutdown waits for it
}

// collector answers at random and notes every call, on the trail too.
type collector struct {
	mu    sync.Mutex
	rng   *rand.Rand
	calls []call
	trail *trail
}

// trail is the exports and the settlements, in the order they happen:
// the exporter alone makes both, one after the other.
type trail struct {
	mu     sync.Mutex
	events []event
}

// event is an export (call, an index in collector.calls), a settlement
// (settle, an index in orderJournal.settled), or, with both -1, a read
// from the journal: the exporter starts the next export.
type event struct {
	call, settle int // -1: not this kind
}

func (tr *trail) add(e event) {
	tr.mu.Lock()
	tr.events = append(tr.events, e)
	tr.mu.Unlock()
}

func (c *collector) export(ctx context.Context, body []byte, n int, final bool) (int, error) {
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		panic(err)
	}
	var ids []int
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				ids = append(ids, idOf([]byte(r.Body.GetStringValue())))
			}
		}
	}
	c.mu.Lock()
	a := answer(c.rng.IntN(int(answers)))
	if c.rng.IntN(3) == 0 {
		a = delivered // most exports go through
	}
	k := c.rng.IntN(n + 1)
	odd := []int{-1 - k, n + 1 + k}[c.rng.IntN(2)]
	i := len(c.calls)
	c.calls = append(c.calls, call{ids: ids, final: final})
	c.mu.Unlock()
	c.trail.add(event{call: i, settle: -1})
	if len(ids) != n {
		return n, fmt.Errorf("%d records in a request of %d", len(ids), n)
	}
	settle := func(rejected int, keep bool) {
		c.mu.Lock()
		c.calls[i].rejected, c.calls[i].keep = rejected, keep
		c.mu.Unlock()
	}
	switch a {
	case refused:
		settle(n, false)
		return n, refusal{}
	case failed:
		settle(n, true)
		return n, errors.New("unavailable")
	case partial:
		settle(k, k == n) // all of them with no verdict: as a failure
		return k, errors.New("partly rejected")
	case panicked:
		settle(n, true)
		panic("exporter bug")
	case hung:
		<-ctx.Done()
		settle(n, true)
		return n, ctx.Err()
	case outOfRange:
		settle(min(max(odd, 0), n), false)
		return odd, nil
	}
	settle(0, false)
	return 0, nil
}

// idOf reads a record's number from its body, "id:N".
func idOf(b []byte) int {
	i := bytes.Index(b, []byte("id:"))
	if i < 0 {
		return -1
	}
	j := i + 3
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	n, _ := strconv.Atoi(string(b[i+3 : j]))
	return n
}

// orderJournal is told each record in order, answers at random, reads
// back what it holds (now and then failing to, as a file that faults),
// and notes the fate of each in the order it is told.
type orderJournal struct {
	rng      *rand.Rand // under the pipeline's lock, as every call is
	order    []int      // the records it numbered, by number
	pending  []int
	held     []heldRecord // by number; nil payload: not held
	missing  map[int]bool // records Replay did not give back
	bareRead []int        // records asked of Replay that it was given no copy of
	settled  [][]int
	kept     []bool
	verdicts map[int]Verdict
	trail    *trail
	steady   bool // it never steps aside: every request may be put back
}

func (j *orderJournal) AddScope(int, otlpwire.Scope) {}
func (j *orderJournal) Append(scope int, rec []byte) Verdict {
	v := Journaled
	switch j.rng.IntN(20) {
	case 0:
		if !j.steady {
			v = Unjournaled
		}
	case 1:
		v = JournalFull
	}
	id := idOf(rec)
	j.verdicts[id] = v
	if v != JournalFull {
		j.order = append(j.order, id)
		j.pending = append(j.pending, id)
		h := heldRecord{scope: scope, id: id, bare: v == Unjournaled}
		if v == Journaled {
			h.payload = bytes.Clone(rec)
		}
		j.held = append(j.held, h)
	}
	return v
}

// heldRecord is a record as the journal keeps it.
type heldRecord struct {
	scope, id int
	payload   []byte
	bare      bool // the journal stepped aside: no copy
}

// Replay reads back what it holds, as the spool does from its files; now
// and then it cannot read a record and the nine after it, now or later,
// as a file that faults.
func (j *orderJournal) Replay(from uint64, req *otlpwire.Request, max int) (n, missing int) {
	j.trail.add(event{call: -1, settle: -1})
	for ; n < max && from+uint64(n) < uint64(len(j.held)); n++ {
		h := &j.held[from+uint64(n)]
		if h.bare {
			j.bareRead = append(j.bareRead, h.id) // it is the queue's alone: the pipeline let it go
		}
		if h.payload != nil && j.rng.IntN(100) == 0 {
			for k := range j.held[from+uint64(n) : min(from+uint64(n)+10, uint64(len(j.held)))] {
				j.held[from+uint64(n)+uint64(k)].payload = nil // the rest of its file
			}
		}
		if h.payload == nil {
			j.missing[h.id] = true
			missing++
		} else if !req.Add(h.scope, h.payload) {
			break
		}
	}
	return n, missing
}
func (j *orderJournal) Settle(n int, keep bool) {
	j.trail.add(event{call: -1, settle: len(j.settled)})
	j.settled = append(j.settled, j.pending[:n:n])
	j.kept = append(j.kept, keep)
	j.pending = j.pending[n:]
}
func (j *orderJournal) Close(context.Context) {}

// tally is what the test knows of the records it handed over.
type tally struct {
	mu       sync.Mutex
	next     int
	accepted map[int]bool
}

func (tl *tally) enqueue(p *Pipeline, rng *rand.Rand, mu *sync.Mutex) {
	tl.mu.Lock()
	id := tl.next
	tl.next++
	tl.mu.Unlock()
	mu.Lock()
	scope := rng.IntN(2)
	mu.Unlock()
	ok := p.Enqueue(scope, encoded(fmt.Sprintf("id:%d", id)), false)
	tl.mu.Lock()
	tl.accepted[id] = ok
	tl.mu.Unlock()
}

func TestAccountingAtRandom(t *testing.T) {
	for seed := range uint64(16) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { accountingAtRandom(t, seed) })
	}
}

func accountingAtRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 37))
	var rmu sync.Mutex // rng is the test's and the producer's
	tr := &trail{}
	col := &collector{rng: rand.New(rand.NewPCG(seed, 1)), trail: tr}
	j := &orderJournal{rng: rand.New(rand.NewPCG(seed, 2)), verdicts: map[int]Verdict{}, missing: map[int]bool{}, trail: tr, steady: seed%2 == 0}
	p := New(Config{
		MaxQueueBytes:   512 + rng.IntN(4096),
		MaxQueueRecords: rng.IntN(3) * 20, // none, 20 or 40
		MaxBatchRecords: 1 + rng.IntN(8),
		MaxRequestBytes: 1 << 20,
		ScheduleDelay:   time.Duration(1+rng.IntN(5)) * time.Millisecond,
		ExportTimeout:   5 * time.Millisecond,
		BlockOnFull:     time.Duration(rng.IntN(2)) * time.Millisecond,
		Export:          col.export,
		Journal:         j,
	})
	p.AddScope(otlpwire.NewScope("a", "", "", nil))
	p.AddScope(otlpwire.NewScope("b", "", "", nil))
	tl := &tally{accepted: map[int]bool{}}
	shutdownWait := time.Duration(rng.IntN(3)) * 10 * time.Millisecond

	stop := make(chan struct{})
	var producer sync.WaitGroup
	producer.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				tl.enqueue(p, rng, &rmu)
				time.Sleep(100 * time.Microsecond)
			}
		}
	})

	var last Observation
	check := func() {
		t.Helper()
		var o Observation
		p.Observe(&o)
		checkObservation(t, o, p.cfg.MaxBatchRecords)
		if o.Emitted != o.Exported+o.Dropped+o.Failed+o.Queued {
			t.Fatalf("counts do not add up: %+v", o)
		}
		// The metrics report these as counters.
		if o.Emitted < last.Emitted || o.Exported < last.Exported || o.Dropped < last.Dropped || o.Failed < last.Failed ||
			o.Unprotected < last.Unprotected || o.HandedOn < last.HandedOn || o.DroppedStopped < last.DroppedStopped {
			t.Fatalf("a count went back: %+v after %+v", o, last)
		}
		last = o
	}
	for range 120 {
		rmu.Lock()
		step := rng.IntN(4)
		n := 1 + rng.IntN(20)
		wait := time.Duration(rng.IntN(20)) * time.Millisecond
		rmu.Unlock()
		switch step {
		case 0:
			for range n {
				tl.enqueue(p, rng, &rmu)
			}
		case 1:
			mark := p.accepted()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			err := p.Flush(ctx)
			cancel()
			if c := p.Counts(); err == nil && c.Exported+c.Failed < mark {
				t.Fatalf("a flush returned before the %d records accepted before it were settled: %+v", mark, c)
			}
		case 2:
			time.Sleep(wait / 10)
		}
		check()
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
	shutdownErr := p.Shutdown(ctx)
	cancel()
	close(stop)
	producer.Wait()
	for range 5 {
		tl.enqueue(p, rng, &rmu) // after the stop: dropped
	}
	<-p.done
	p.CloseJournal(context.Background())
	check()

	c := p.Counts()
	if shutdownErr == nil && c.Queued != 0 {
		t.Fatalf("shut down in time with %d records queued", c.Queued)
	}
	if len(j.bareRead) > 0 {
		t.Fatalf("records %v, which the journal was given no copy of, were read back from it: lost from memory", j.bareRead)
	}
	checkDrops(t, p, tl, j)
	checkTrail(t, p.Counts(), tr, col, j)
}

// checkDrops checks the drops against what the journal was told: with a
// journal, what the queue has no room for is kept there, so only the
// journal's bound and the shutdown drop a record.
func checkDrops(t *testing.T, p *Pipeline, tl *tally, j *orderJournal) {
	t.Helper()
	var o Observation
	p.Observe(&o)
	var dropped, stopped, unjournaled uint64
	for id, ok := range tl.accepted {
		v, told := j.verdicts[id]
		switch {
		case ok && v == Unjournaled:
			unjournaled++
		case !ok && !told:
			stopped++
		case !ok && v != JournalFull:
			t.Fatalf("record %d dropped, the journal's verdict %v", id, v)
		}
		if !ok {
			dropped++
		}
	}
	// A journal that stepped aside holds no copy of the records that came
	// meanwhile: while they wait, a full queue drops, as without a journal.
	if j.steady && o.DroppedStopped != stopped || o.DroppedStopped > stopped {
		t.Fatalf("observation %+v: %d dropped with no word to the journal, want %d at the stop", o, stopped, o.DroppedStopped)
	}
	if o.Emitted != uint64(tl.next) || o.Dropped != dropped || o.Unprotected != unjournaled {
		t.Fatalf("observation %+v: want %d emitted, %d dropped, %d unprotected", o, tl.next, dropped, unjournaled)
	}
	for id := tl.next - 5; id < tl.next; id++ {
		if tl.accepted[id] {
			t.Fatalf("record %d accepted after the shutdown", id)
		}
	}
	if got := len(j.order); uint64(got) != o.Emitted-o.Dropped {
		t.Fatalf("the journal numbered %d records, %d accepted", got, o.Emitted-o.Dropped)
	}
}

// checkTrail reads the exports and settlements in the order they
// happened, and checks each request against the journal's numbering and
// the counts against what the collector answered.
func checkTrail(t *testing.T, c Counts, tr *trail, col *collector, j *orderJournal) {
	t.Helper()
	pos := 0                  // the number of the oldest record not settled
	open := -1                // the request not settled yet: its settlement follows, or it was put back
	answered := map[int]int{} // record: the request the collector answered for it in
	var exported, failed uint64
	putBack := func(i int) {
		switch cl := col.calls[i]; {
		case !cl.keep || cl.rejected != len(cl.ids):
			t.Fatalf("request %d of %v was put back and sent again, though the collector answered for it (%d rejected)", i, cl.ids, cl.rejected)
		case cl.final:
			t.Fatalf("request %d of %v was put back, though a flush or the shutdown waited for it", i, cl.ids)
		}
	}
	for _, e := range tr.events {
		if e.call < 0 && e.settle < 0 {
			if open >= 0 {
				putBack(open)
			}
			open = -1
			continue
		}
		if e.call >= 0 {
			if open >= 0 {
				putBack(open)
			}
			open = e.call
			if end, why := span(j, pos, col.calls[open].ids); why != "" {
				t.Fatalf("request %d of %v: %s; the journal's records from %d: %v", open, col.calls[open].ids, why, pos, j.order[pos:min(end+5, len(j.order))])
			}
			continue
		}
		settled, keep := j.settled[e.settle], j.kept[e.settle]
		var ids []int
		want := false // the keep the journal should be told
		if open >= 0 {
			cl := col.calls[open]
			ids, want = cl.ids, cl.keep
			for _, id := range ids {
				if at, ok := answered[id]; ok {
					t.Fatalf("record %d delivered in request %d and again in request %d", id, at, open)
				}
				answered[id] = open
			}
			exported += uint64(len(ids) - cl.rejected)
			failed += uint64(cl.rejected)
		}
		extra := slices.DeleteFunc(slices.Clone(settled), func(id int) bool { return slices.Contains(ids, id) })
		if len(extra)+len(ids) != len(settled) || keep != want || !slices.Equal(settled, j.order[pos:pos+len(settled)]) {
			t.Fatalf("settlement %d of %v, keep %v, after request %d of %v: want its records from %d and keep %v", e.settle, settled, keep, open, ids, pos, want)
		}
		for _, id := range extra {
			if !j.missing[id] {
				t.Fatalf("settlement %d of %v: record %d settled in no request, though the journal gave it back", e.settle, settled, id)
			}
		}
		failed += uint64(len(extra))
		pos += len(settled)
		open = -1
	}
	if open >= 0 {
		putBack(open) // cut short by the shutdown: kept for a later process
	}
	if c.Exported != exported || c.Failed != failed {
		t.Fatalf("counts %+v: the collector took %d, and %d failed", c, exported, failed)
	}
	if queued := uint64(len(j.order) - pos); c.Queued != queued || len(j.pending) != int(queued) {
		t.Fatalf("counts %+v: %d accepted and not settled, the journal holds %d", c, queued, len(j.pending))
	}
}

// span checks that a request's records are the journal's next from pos
// on, but for records it could not give back, and returns where they end.
func span(j *orderJournal, pos int, ids []int) (end int, why string) {
	left := len(ids)
	for end = pos; left > 0; end++ {
		if end == len(j.order) {
			return end, "records the journal never numbered, or sent out of order"
		}
		switch id := j.order[end]; {
		case slices.Contains(ids, id):
			left--
		case !j.missing[id]:
			return end, fmt.Sprintf("record %d, which the journal holds, left out: not the oldest unsettled, or out of order", id)
		}
	}
	return end, ""
}
