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
// steps aside or is full now and then, and a shutdown, in whatever order
// the seed and the scheduler give. At every read the counts add up and no
// count goes back; at the end every record accepted is in one request or
// still queued, each settled once, the journal told each one's fate once,
// in order, kept exactly when no collector answered for it.

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
}

// collector answers at random and notes every call.
type collector struct {
	mu    sync.Mutex
	rng   *rand.Rand
	calls []call
}

func (c *collector) export(ctx context.Context, body []byte, n int, _ bool) (int, error) {
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
	c.calls = append(c.calls, call{ids: ids})
	c.mu.Unlock()
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

// orderJournal is told each record in order, answers at random, and notes
// the fate of each in the order it is told.
type orderJournal struct {
	rng      *rand.Rand // under the pipeline's lock, as every call is
	pending  []int
	held     []heldRecord // by the number Replay reads them by; nil payload: not held
	settled  [][]int
	kept     []bool
	verdicts map[int]Verdict
}

func (j *orderJournal) AddScope(int, otlpwire.Scope) {}
func (j *orderJournal) Append(scope int, rec []byte) Verdict {
	v := Journaled
	switch j.rng.IntN(20) {
	case 0:
		v = Unjournaled
	case 1:
		v = JournalFull
	}
	id := idOf(rec)
	j.verdicts[id] = v
	if v != JournalFull {
		j.pending = append(j.pending, id)
		h := heldRecord{scope: scope}
		if v == Journaled {
			h.payload = bytes.Clone(rec)
		}
		j.held = append(j.held, h)
	}
	return v
}

// heldRecord is a record as the journal keeps it.
type heldRecord struct {
	scope   int
	payload []byte
}

// Replay reads back what it holds, as the spool does from its files.
func (j *orderJournal) Replay(from uint64, req *otlpwire.Request, max int) (n, missing int) {
	for ; n < max && from+uint64(n) < uint64(len(j.held)); n++ {
		h := j.held[from+uint64(n)]
		if h.payload == nil {
			missing++
		} else if !req.Add(h.scope, h.payload) {
			break
		}
	}
	return n, missing
}
func (j *orderJournal) Settle(n int, keep bool) {
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
	col := &collector{rng: rand.New(rand.NewPCG(seed, 1))}
	j := &orderJournal{rng: rand.New(rand.NewPCG(seed, 2)), verdicts: map[int]Verdict{}}
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

	var last Counts
	check := func() {
		t.Helper()
		c := p.Counts()
		if c.Emitted != c.Exported+c.Dropped+c.Failed+c.Queued {
			t.Fatalf("counts do not add up: %+v", c)
		}
		if c.Emitted < last.Emitted || c.Exported < last.Exported || c.Dropped < last.Dropped || c.Failed < last.Failed || c.Unprotected < last.Unprotected {
			t.Fatalf("a count went back: %+v after %+v", c, last)
		}
		last = c
		checkCounts(t, p)
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
	var accepted, dropped, unjournaled uint64
	for id, ok := range tl.accepted {
		if ok {
			accepted++
			if j.verdicts[id] == Unjournaled {
				unjournaled++
			}
		} else {
			dropped++
		}
	}
	if c.Emitted != uint64(tl.next) || c.Dropped != dropped || c.Unprotected != unjournaled {
		t.Fatalf("counts %+v: want %d emitted, %d dropped, %d unprotected", c, tl.next, dropped, unjournaled)
	}
	for id := tl.next - 5; id < tl.next; id++ {
		if tl.accepted[id] {
			t.Fatalf("record %d accepted after the shutdown", id)
		}
	}

	// Every accepted record in one request, or still queued; each request
	// settled once, its records the journal's next, kept when no collector
	// answered for them.
	seen := map[int]bool{}
	var exported, failedN uint64
	if len(j.settled) != len(col.calls) {
		t.Fatalf("%d exports, the journal told of %d", len(col.calls), len(j.settled))
	}
	for i, cl := range col.calls {
		for _, id := range cl.ids {
			if !tl.accepted[id] || seen[id] {
				t.Fatalf("request %d: record %d, accepted %v, sent before %v", i, id, tl.accepted[id], seen[id])
			}
			seen[id] = true
		}
		// A request groups its records by scope: the same records as the
		// journal's next, not in the same order.
		if !slices.Equal(slices.Sorted(slices.Values(cl.ids)), slices.Sorted(slices.Values(j.settled[i]))) || j.kept[i] != cl.keep {
			t.Fatalf("request %d of %v: the journal settled %v, keep %v; want keep %v", i, cl.ids, j.settled[i], j.kept[i], cl.keep)
		}
		exported += uint64(len(cl.ids) - cl.rejected)
		failedN += uint64(cl.rejected)
	}
	if c.Exported != exported || c.Failed != failedN {
		t.Fatalf("counts %+v: the collector took %d and rejected %d", c, exported, failedN)
	}
	if queued := accepted - uint64(len(seen)); c.Queued != queued || uint64(len(j.pending)) != queued {
		t.Fatalf("counts %+v: %d accepted and in no request, the journal holds %d", c, queued, len(j.pending))
	}
}
