package zaplens

import (
	"context"
	"sync"
)

// flushes runs the SDK's ForceFlush detached from the caller's context.
//
// The SDK's flush exports the whole queue in chunks and, once its context
// is done, stops between chunks and forgets the rest: those records are
// neither exported nor failed, so they would stay counted as queued and
// hold places in the gate forever. A bridge's Sync with a short bound and
// the collector down would shrink the queue at each call. Run without a
// deadline, every chunk reaches the tally, bounded instead by the
// exporter's own timeout; the caller waits only as long as its context
// allows.
//
// At most one flush runs and one waits: a caller that comes while one is
// running joins the waiting one, which starts after and so covers its
// records. Goroutines never pile up behind a collector that is down.
type flushes struct {
	run     func() error // the SDK provider's ForceFlush, without deadline
	mu      sync.Mutex
	next    *flushCall // not yet started; joined by later callers
	running sync.Mutex // held by the flush in progress
}

type flushCall struct {
	done chan struct{}
	err  error
}

// start returns the flush that will cover every record emitted so far.
func (f *flushes) start() *flushCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next != nil {
		return f.next
	}
	c := &flushCall{done: make(chan struct{})}
	f.next = c
	go f.do(c)
	return c
}

func (f *flushes) do(c *flushCall) {
	f.running.Lock()
	defer f.running.Unlock()
	f.mu.Lock()
	f.next = nil // from now on, new callers need a later flush
	f.mu.Unlock()
	c.err = f.run()
	close(c.done)
}

// wait flushes and waits for it or for ctx, whichever ends first.
func (f *flushes) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := f.start()
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
