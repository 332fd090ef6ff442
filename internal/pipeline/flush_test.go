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
