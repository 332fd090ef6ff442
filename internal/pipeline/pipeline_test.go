package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// sink decodes every request it is given, as a collector would, and keeps
// the bodies of the records with their scope names, in arrival order.
type sink struct {
	mu       sync.Mutex
	bodies   []string
	scopes   []string
	requests []int // records per request
	sizes    []int // bytes per request
	block    chan struct{}
	fail     error
	calls    int
	finals   int
}

func (s *sink) export(ctx context.Context, body []byte, n int, final bool) (int, error) {
	s.mu.Lock()
	s.calls++
	if final {
		s.finals++
	}
	block, fail := s.block, s.fail
	s.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
	if fail != nil {
		return n, fail
	}
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		return n, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	got := 0
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				s.bodies = append(s.bodies, r.Body.GetStringValue())
				s.scopes = append(s.scopes, sl.GetScope().GetName())
				got++
			}
		}
	}
	s.requests = append(s.requests, got)
	s.sizes = append(s.sizes, len(body))
	if got != n {
		return n, errors.New("request holds a different count of records")
	}
	return 0, nil
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func newTestPipeline(t *testing.T, s *sink, mod func(*Config)) *Pipeline {
	t.Helper()
	cfg := Config{
		MaxQueueBytes:   1 << 20,
		MaxBatchRecords: 100,
		MaxRequestBytes: 1 << 20,
		ScheduleDelay:   time.Hour,
		ExportTimeout:   5 * time.Second,
		Resource:        otlpwire.NewResource([]attribute.KeyValue{attribute.String("service.name", "t")}, ""),
		Export:          s.export,
	}
	if mod != nil {
		mod(&cfg)
	}
	p := New(cfg)
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

func encoded(body string) []byte {
	return otlpwire.AppendRecord(nil, &otlpwire.Record{Severity: log.SeverityInfo, Body: attribute.StringValue(body)}, nil, otlpwire.DefaultLimits)
}

// Records leave in order, grouped by scope in the order each scope first
// appears, as the SDK's exporter groups them.
func TestGroupsByScopeInOrder(t *testing.T) {
	s := &sink{}
	p := newTestPipeline(t, s, nil)
	a := p.AddScope(otlpwire.NewScope("a", "", "", nil))
	b := p.AddScope(otlpwire.NewScope("b", "", "", nil))
	for i, sc := range []int{b, a, b, a, a} {
		p.Enqueue(sc, encoded(string(rune('0'+i))), false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"b0", "b2", "a1", "a3", "a4"}
	for i := range want {
		if got := s.scopes[i] + s.bodies[i]; got != want[i] {
			t.Fatalf("got %v %v, want %v", s.scopes, s.bodies, want)
		}
	}
	if c := p.Counts(); c != (Counts{Emitted: 5, Exported: 5}) {
		t.Errorf("counts %+v", c)
	}
}

// The grouping's scratch starts clean for each batch: a second batch with
// its scopes first seen in another order is grouped in that order.
func TestGroupsEachBatchAfresh(t *testing.T) {
	s := &sink{}
	p := newTestPipeline(t, s, nil)
	var ids []int
	for _, name := range []string{"a", "b", "c"} {
		ids = append(ids, p.AddScope(otlpwire.NewScope(name, "", "", nil)))
	}
	rounds := []struct {
		scopes []int
		want   string
	}{
		{[]int{2, 0, 2, 1, 0}, "c0 c2 a1 a4 b3"},
		{[]int{1, 1, 0, 2, 0}, "b0 b1 a2 a4 c3"},
		{[]int{0, 0}, "a0 a1"},
	}
	for _, r := range rounds {
		s.scopes, s.bodies = nil, nil
		for i, k := range r.scopes {
			p.Enqueue(ids[k], encoded(string(rune('0'+i))), false)
		}
		if err := p.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range s.bodies {
			got = append(got, s.scopes[i]+s.bodies[i])
		}
		if g := strings.Join(got, " "); g != r.want {
			t.Errorf("got %s, want %s", g, r.want)
		}
	}
}

// Requests stay under the byte bound and the record bound, across chunks,
// and records larger than a chunk pass whole.
func TestRequestsStayUnderBounds(t *testing.T) {
	s := &sink{}
	const maxBytes = 200 << 10
	p := newTestPipeline(t, s, func(c *Config) {
		c.MaxRequestBytes = maxBytes
		c.MaxQueueBytes = 64 << 20
	})
	sc := p.AddScope(otlpwire.NewScope("s", "", "", nil))
	big := bytes.Repeat([]byte("x"), 100<<10) // larger than a chunk
	var want []string
	for i := range 3000 {
		body := "line"
		if i%500 == 7 {
			body = string(big)
		}
		want = append(want, body)
		p.Enqueue(sc, encoded(body), false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.bodies) != len(want) {
		t.Fatalf("%d records arrived, want %d", len(s.bodies), len(want))
	}
	for i := range want {
		if s.bodies[i] != want[i] {
			t.Fatalf("record %d differs", i)
		}
	}
	for i, n := range s.requests {
		if n > 100 || s.sizes[i] > maxBytes {
			t.Errorf("request %d: %d records, %d bytes; bounds 100, %d", i, n, s.sizes[i], maxBytes)
		}
	}
}

// A request pays for the scopes it holds, not for every scope registered:
// with the smallest request bound and thousands of scopes, the records of
// one scope still go in full batches; records of many scopes stay under
// the bound.
func TestManyScopesKeepBatches(t *testing.T) {
	s := &sink{}
	const maxBytes = 64 << 10
	p := newTestPipeline(t, s, func(c *Config) { c.MaxRequestBytes = maxBytes })
	var scopes []int
	for i := range 2000 {
		scopes = append(scopes, p.AddScope(otlpwire.NewScope(fmt.Sprintf("scope.%04d.with.a.longish.name", i), "1.0", "", nil)))
	}
	for range 100 {
		p.Enqueue(scopes[0], encoded("line"), false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 1 || s.requests[0] != 100 {
		t.Fatalf("100 records of one scope went in requests of %v, want one of 100", s.requests)
	}
	s.requests, s.sizes = nil, nil
	for i := range 3000 {
		p.Enqueue(scopes[i%len(scopes)], encoded("line"), false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, n := range s.requests {
		if n > 100 || s.sizes[i] > maxBytes {
			t.Errorf("request %d: %d records, %d bytes; bounds 100, %d", i, n, s.sizes[i], maxBytes)
		}
	}
	if len(s.requests) > 40 {
		t.Errorf("3000 records in %d requests: batches are not filled", len(s.requests))
	}
}

// A full queue drops at once, counts it, and never blocks the caller.
func TestFullQueueDropsAndCounts(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxQueueBytes = 10 << 10 })
	sc := p.AddScope(otlpwire.Scope{})
	rec := encoded("a line of some length to fill the queue quickly")
	start := time.Now()
	for range 2000 {
		p.Enqueue(sc, rec, false)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("2000 calls into a full queue took %v", d)
	}
	checkCounts(t, p)
	c := p.Counts()
	if c.Dropped == 0 || c.Emitted != 2000 {
		t.Errorf("counts %+v: want drops", c)
	}
	close(s.block)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, p)
	c = p.Counts()
	if c.Queued != 0 || int(c.Exported) != s.count() {
		t.Errorf("after flush: %+v, sink has %d", c, s.count())
	}
}

// The queue's memory goes back: after a burst, what it keeps is bounded.
func TestChunksReused(t *testing.T) {
	s := &sink{}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxQueueBytes = 64 << 20 })
	sc := p.AddScope(otlpwire.Scope{})
	rec := encoded("step done")
	for range 3 {
		for range 50000 {
			p.Enqueue(sc, rec, false)
		}
		if err := p.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.q.free) > maxFreeChunks || len(p.q.chunks) > 1 || p.q.records != 0 || p.q.bytes != 0 {
		t.Errorf("queue after drain: %d free, %d chunks, %d records, %d bytes", len(p.q.free), len(p.q.chunks), p.q.records, p.q.bytes)
	}
}

// A flush exports in final mode and returns once its records are settled;
// one cut short by ctx leaves them to settle later, all counted.
func TestFlushFinalAndBounded(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, nil)
	sc := p.AddScope(otlpwire.Scope{})
	for range 250 {
		p.Enqueue(sc, encoded("x"), false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := p.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("flush against a blocked export: %v", err)
	}
	close(s.block)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := p.Counts(); c != (Counts{Emitted: 250, Exported: 250}) {
		t.Errorf("counts %+v", c)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finals == 0 {
		t.Error("no export was in final mode")
	}
}

// Urgent closes when a flush starts waiting, so that an export retrying in
// normal mode can give way.
func TestUrgentClosesOnFlush(t *testing.T) {
	s := &sink{}
	p := newTestPipeline(t, s, nil)
	sc := p.AddScope(otlpwire.Scope{})
	urgent := p.Urgent()
	p.Enqueue(sc, encoded("x"), false)
	go func() { _ = p.Flush(context.Background()) }()
	select {
	case <-urgent:
	case <-time.After(2 * time.Second):
		t.Fatal("Urgent did not close when a flush started")
	}
}

// A panicking export fails its records, counted, and the pipeline goes on.
func TestPanickingExportCountsFailed(t *testing.T) {
	calls := 0
	p := New(Config{MaxQueueBytes: 1 << 20, MaxBatchRecords: 10, MaxRequestBytes: 1 << 20,
		ScheduleDelay: time.Hour, ExportTimeout: time.Second,
		Export: func(context.Context, []byte, int, bool) (int, error) {
			calls++
			if calls == 1 {
				panic("exporter bug")
			}
			return 0, nil
		}})
	defer p.Shutdown(context.Background())
	sc := p.AddScope(otlpwire.Scope{})
	for range 20 {
		p.Enqueue(sc, encoded("x"), false)
	}
	_ = p.Flush(context.Background())
	at, last := p.LastFailure()
	if c := p.Counts(); c.Failed != 10 || c.Exported != 10 || last == nil || at.IsZero() {
		t.Errorf("counts %+v, last error %v at %v", c, last, at)
	}
}

// Shutdown keeps its deadline with an export that never returns; what it
// could not send stays counted, and a second call keeps its own deadline.
func TestShutdownDeadlines(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	defer close(s.block)
	p := newTestPipeline(t, s, func(c *Config) { c.MaxBatchRecords = 10 })
	sc := p.AddScope(otlpwire.Scope{})
	for range 100 {
		p.Enqueue(sc, encoded("x"), false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan time.Duration)
	go func() {
		start := time.Now()
		ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel2()
		time.Sleep(10 * time.Millisecond)
		_ = p.Shutdown(ctx2)
		done <- time.Since(start)
	}()
	start := time.Now()
	if err := p.Shutdown(ctx); err == nil {
		t.Error("Shutdown with an export that never returns reported no error")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Shutdown took %v with a 300ms deadline", d)
	}
	if d := <-done; d > 200*time.Millisecond {
		t.Errorf("the second Shutdown took %v with a 50ms deadline", d)
	}
	checkCounts(t, p)
	c := p.Counts()
	if p.Enqueue(sc, encoded("late"), false) {
		t.Error("a record after Shutdown was taken")
	}
	if d := p.Counts().Dropped; d != c.Dropped+1 {
		t.Errorf("a record after Shutdown: dropped %d, want %d", d, c.Dropped+1)
	}
}

// A producer waiting for room under BlockOnFull is in no count until its
// record's fate is decided, so that every identity holds meanwhile.
func TestBlockedProducerInNoCount(t *testing.T) {
	release := make(chan struct{})
	p := New(Config{MaxQueueBytes: 100, MaxBatchRecords: 1, MaxRequestBytes: 1 << 20, ScheduleDelay: time.Hour,
		ExportTimeout: time.Minute, BlockOnFull: 5 * time.Second, Resource: otlpwire.NewResource(nil, ""),
		Export: func(context.Context, []byte, int, bool) (int, error) { <-release; return 0, nil }})
	defer p.Shutdown(context.Background())
	defer close(release)
	s := p.AddScope(otlpwire.NewScope("a", "", "", nil))
	rec := make([]byte, 60)
	p.Enqueue(s, rec, false)
	time.Sleep(50 * time.Millisecond) // taken by the blocked export
	p.Enqueue(s, rec, false)          // waits in the queue
	go p.Enqueue(s, rec, false)       // blocks for room
	time.Sleep(100 * time.Millisecond)
	var o Observation
	p.Observe(&o)
	checkObservation(t, o, p.cfg.MaxBatchRecords)
	// The blocked producer's record is in no count: not emitted, not
	// dropped, not waiting.
	if o.Emitted != 2 || o.Dropped != 0 || o.Waiting != 1 || o.InFlight != 1 || o.Queued != 2 {
		t.Errorf("with one record in flight, one waiting and one producer blocked: %+v", o)
	}
	checkCounts(t, p)
}

// What a steady stream adds while a request is in flight waits to fill a
// batch of its own, not a small request sent as the first one returns; the
// schedule delay and a flush still send a batch that is not full.
func TestStreamFillsBatches(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxBatchRecords = 10 })
	sc := p.AddScope(otlpwire.NewScope("a", "", "", nil))
	if got := addWhileInFlight(t, p, s, sc, 10, 3); len(got) != 1 {
		t.Fatalf("requests %v: the 3 records added during the first went alone", got)
	}
	for i := range 9 {
		p.Enqueue(sc, encoded(fmt.Sprint(13+i)), false)
	}
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.requestSizes(); fmt.Sprint(got) != "[10 10 2]" {
		t.Errorf("requests %v, want [10 10 2]", got)
	}

	// The schedule delay sends a batch that is not full.
	s2 := &sink{}
	p2 := newTestPipeline(t, s2, func(c *Config) { c.MaxBatchRecords = 10; c.ScheduleDelay = 20 * time.Millisecond })
	sc2 := p2.AddScope(otlpwire.NewScope("a", "", "", nil))
	p2.Enqueue(sc2, encoded("late"), false)
	waitFor(t, "a lone record sent after the schedule delay", func() bool { return s2.count() == 1 })
}

func (s *sink) exports() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *sink) requestSizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// The schedule delay sends what was waiting when it passed, not what
// arrives while that request is in flight: a stream slower than a batch
// per delay still fills its requests after the timer has fired once.
func TestDelayDrainsOnlyWhatWaited(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxBatchRecords = 10; c.ScheduleDelay = 200 * time.Millisecond })
	sc := p.AddScope(otlpwire.NewScope("a", "", "", nil))
	if got := addWhileInFlight(t, p, s, sc, 3, 3); len(got) != 1 { // the 3 went as the delay passed
		t.Fatalf("requests %v: what arrived during the delay's request went at once", got)
	}
	waitFor(t, "the later 3 exported", func() bool { return p.Counts().Exported == 6 })
	if got := s.requestSizes(); fmt.Sprint(got) != "[3 3]" {
		t.Errorf("requests %v, want [3 3]: the later 3 after the next delay", got)
	}
}

// addWhileInFlight enqueues first records and, once the export of a request
// has started (s blocks it), during more; then lets it through and, after
// a pause in which a premature request would go, returns the requests so
// far.
func addWhileInFlight(t *testing.T, p *Pipeline, s *sink, sc, first, during int) []int {
	t.Helper()
	for i := range first {
		p.Enqueue(sc, encoded(fmt.Sprint(i)), false)
	}
	waitFor(t, "the first request in flight", func() bool { return s.exports() > 0 })
	for i := range during {
		p.Enqueue(sc, encoded(fmt.Sprint(first+i)), false)
	}
	close(s.block)
	waitFor(t, "the first request exported", func() bool { return p.Counts().Exported >= uint64(first) })
	time.Sleep(50 * time.Millisecond)
	return s.requestSizes()
}

// waitFor fails the test if cond is not met within 5 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
	}
}
