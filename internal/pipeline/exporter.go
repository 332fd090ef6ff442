package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// run is the export goroutine: it sends a request when a batch is ready,
// when the oldest record has waited the schedule delay, when a flush asks,
// and drains the queue at shutdown.
func (p *Pipeline) run() {
	defer close(p.done)
	defer p.cancel()
	var b batcher
	timer := time.NewTimer(p.cfg.ScheduleDelay)
	defer timer.Stop()
	stopping := false
	var dueTo uint64 // the records accepted before it have waited the delay
	for {
		if !stopping {
			select {
			case <-p.kick:
			case <-timer.C:
				dueTo = p.accepted()
			case <-p.stop:
				stopping = true
			}
		}
		for p.exportOne(&b, stopping, dueTo) {
			if p.ctx.Err() != nil {
				return
			}
		}
		if stopping || p.ctx.Err() != nil {
			return
		}
		timer.Reset(p.cfg.ScheduleDelay)
	}
}

// exportOne sends one request if one is due, and reports whether it did.
// A request is due when a batch is full, when a flush or the shutdown waits,
// or when the oldest record waiting was accepted before dueTo, the mark
// the schedule delay set. What a steady stream adds meanwhile, while a
// request is in flight, waits to fill a batch of its own: a request costs
// the transport and the collector a fixed price, so fewer, fuller requests
// cost less per line.
func (p *Pipeline) exportOne(b *batcher, stopping bool, dueTo uint64) bool {
	p.mu.Lock()
	p.kicked = false
	final := stopping || p.flushAt > p.settled()
	oldest := p.enqueued() - uint64(p.q.records) // the number of the oldest waiting
	if p.q.records == 0 || !(final || p.batchReady() || oldest < dueTo) {
		p.mu.Unlock()
		return false
	}
	queued := p.q.bytes
	b.req.Reset(p.cfg.Resource, p.scopes, p.cfg.MaxRequestBytes)
	b.done = p.q.take(&b.req, p.cfg.MaxBatchRecords, b.done[:0])
	n := b.req.Len()
	p.obs.takenBytes += uint64(queued - p.q.bytes)
	p.mu.Unlock()
	p.room.broadcast()

	body := b.req.Bytes() // grouped by scope, as the SDK's exporter groups them
	// The request holds its own copy: the chunks go back now, not after an
	// export that may take the whole timeout.
	p.mu.Lock()
	p.q.release(b.done)
	p.mu.Unlock()
	rejected, err := p.cfg.Export.Call(p.ctx, p.cfg.ExportTimeout, body, n, final)

	p.mu.Lock()
	p.counts.Exported += uint64(n - rejected)
	p.counts.Failed += uint64(rejected)
	p.obs.fail(err, rejected)
	if err != nil {
		p.lastErr, p.lastAt = err, time.Now()
	}
	if p.journal != nil {
		p.journal.Settle(n, Unanswered(err, rejected, n))
	}
	p.mu.Unlock()
	p.progress.broadcast()
	p.room.broadcast()
	return true
}

// Unanswered tells whether an export's records failed with no verdict of
// the collector on them: no answer, a timeout, retryable statuses until
// the time ran out. A journal keeps those for a later process to send; what
// the collector acknowledged or refused for good it lets go.
func Unanswered(err error, rejected, n int) bool {
	return err != nil && rejected == n && !answered(err)
}

// answered tells whether an export error is the collector's own verdict on
// the records, such as HTTP 400 or gRPC InvalidArgument: sending them again
// would be refused again. It is told by an Answered method in err's chain.
func answered(err error) bool {
	var a interface{ Answered() bool }
	return errors.As(err, &a) && a.Answered()
}

// Call calls f with body, of n records, within timeout of ctx. A panic in
// f is the failure of all n; rejected is kept between 0 and n.
func (f ExportFunc) Call(ctx context.Context, timeout time.Duration, body []byte, n int, final bool) (rejected int, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			rejected, err = n, panicError{r}
		}
	}()
	rejected, err = f(ctx, body, n, final)
	return min(max(rejected, 0), n), err
}

// batcher builds requests, reusing its buffers from one to the next.
type batcher struct {
	req  otlpwire.Request
	done []*chunk
}
