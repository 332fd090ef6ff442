package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// A flush sends what was accepted before it, as a final export; what
// arrives while its request is in flight waits for a batch or the delay,
// as any record does, once the flush's mark is reached.
func TestFlushEndsAtItsMark(t *testing.T) {
	s := &sink{block: make(chan struct{})}
	p := newTestPipeline(t, s, func(c *Config) { c.MaxBatchRecords = 10 })
	sc := p.AddScope(otlpwire.NewScope("a", "", "", nil))
	for i := range 3 {
		p.Enqueue(sc, encoded(fmt.Sprint(i)), false)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- p.Flush(context.Background()) }()
	waitFor(t, "the flush's request in flight", func() bool { return s.exports() > 0 })
	for i := range 3 {
		p.Enqueue(sc, encoded(fmt.Sprint(3+i)), false)
	}
	close(s.block)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // a request past the mark would go now
	s.mu.Lock()
	finals := s.finals
	s.mu.Unlock()
	if got := s.requestSizes(); fmt.Sprint(got) != "[3]" || finals != 1 || p.Counts().Queued != 3 {
		t.Errorf("requests %v, %d final, counts %+v: want the flush's 3 in one final request and the later 3 waiting", got, finals, p.Counts())
	}
}

// A flush with nothing to wait for returns at once, and tells no export in
// flight to give way.
func TestEmptyFlushIsNotUrgent(t *testing.T) {
	p := newTestPipeline(t, &sink{}, nil)
	urgent := p.Urgent()
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-urgent:
		t.Error("an empty flush signalled urgency")
	default:
	}
}

// FlushWaiting counts from the oldest flush not yet done, not from one
// done before it.
func TestFlushWaitingFromTheFlushThatWaits(t *testing.T) {
	s := &sink{}
	p := newTestPipeline(t, s, nil)
	sc := p.AddScope(otlpwire.Scope{})
	p.Enqueue(sc, encoded("a"), false)
	if err := p.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	s.mu.Lock()
	s.block = make(chan struct{})
	s.mu.Unlock()
	p.Enqueue(sc, encoded("b"), false)
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_ = p.Flush(ctx) // cut short: the flush waits on
	if w, since := p.FlushWaiting(), time.Since(started); w <= 0 || w > since {
		t.Errorf("FlushWaiting %v, %v after the flush that waits was asked for", w, since)
	}
	close(s.block)
}
