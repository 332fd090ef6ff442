package zaplens

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// flushGroup runs a provider's ForceFlush for every Sync and terminal entry
// of a bridge with at most one flush running and one waiting: a caller that
// comes while one runs joins the waiting one, which starts after it and so
// covers the caller's records. Each caller waits within its own bound. A
// provider whose ForceFlush ignores its context thus holds two goroutines
// at most, not one per call.
type flushGroup struct {
	mu      sync.Mutex
	next    *flushCall // not yet started; joined by later callers
	running sync.Mutex // held by the flush in progress
}

type flushCall struct {
	done chan struct{}
	err  error
}

// do flushes f, waiting within ctx; the flush itself is bounded by
// timeout from when it starts, which may be after this call, once the flush
// before it ends.
func (g *flushGroup) do(ctx context.Context, f flusher, timeout time.Duration) error {
	c := g.join(f, timeout)
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// join returns the flush that will cover every record emitted so far,
// starting it if none waits.
func (g *flushGroup) join(f flusher, timeout time.Duration) *flushCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.next != nil {
		return g.next
	}
	c := &flushCall{done: make(chan struct{})}
	g.next = c
	go g.run(c, f, timeout)
	return c
}

func (g *flushGroup) run(c *flushCall, f flusher, timeout time.Duration) {
	g.running.Lock()
	defer g.running.Unlock()
	g.mu.Lock()
	g.next = nil // from now on, new callers need a later flush
	g.mu.Unlock()
	defer close(c.done)
	defer func() {
		if r := recover(); r != nil {
			c.err = errors.New("panic: " + zapfield.PanicText(r))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c.err = f.ForceFlush(ctx)
}
