package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
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
	if p.deferred > 0 {
		if p.journal == nil {
			p.mu.Unlock()
			return false // closed: they stay in its files, for a later process
		}
		return p.exportSpilled(b, final) // the oldest: due at once
	}
	if p.q.records == 0 || !(final || p.batchReady() || p.next < dueTo) {
		p.mu.Unlock()
		return false
	}
	from := p.next
	queued := p.q.bytes
	b.req.Reset(p.cfg.Resource, p.scopes, p.cfg.MaxRequestBytes)
	b.done = p.q.take(&b.req, p.cfg.MaxBatchRecords, b.done[:0])
	n := b.req.Len()
	p.take(n)
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
	return p.settle(from, n, 0, rejected, err, final)
}

// exportSpilled sends the next records the journal holds on disk only, and
// reports whether the exporter should go on at once. It is called with the
// lock held.
func (p *Pipeline) exportSpilled(b *batcher, final bool) bool {
	for {
		from := p.next
		b.req.Reset(p.cfg.Resource, p.scopes, p.cfg.MaxRequestBytes)
		n, missing := p.journal.Replay(from, &b.req, int(min(p.deferred, uint64(p.cfg.MaxBatchRecords))))
		p.take(n)
		p.deferred -= uint64(n)
		p.mu.Unlock()
		if n == 0 {
			return false // nothing could be read: not a loop on it
		}
		sent := n - missing
		if sent == 0 {
			return p.settle(from, n, missing, 0, nil, final)
		}
		body, err := copyOut(&b.req) // the journal's files are read in place
		if err == nil {
			rejected, err := p.cfg.Export.Call(p.ctx, p.cfg.ExportTimeout, body, sent, final)
			return p.settle(from, n, missing, rejected, err, final)
		}
		// A file cut (or failing) since Replay: no export was made, and
		// none failed. They are read back again at once, a final export's
		// as a live one's: the journal then finds the cut, counts those
		// past it missing (lost with the file, not failed by an export)
		// and gives the others. Replay reads every page a request will,
		// so this ends: each time round, a page failed in between.
		p.mu.Lock()
		p.respill(from)
		if p.journal == nil || p.ctx.Err() != nil {
			p.mu.Unlock()
			return false // closed, or the exporter stopped, meanwhile: they stay in the files
		}
	}
}

// settle counts the outcome of the export of the n records numbered from
// on, of which missing were not in it (the journal lost them) and rejected
// were not delivered, and tells the journal. An export no collector
// answered for, while the journal holds every record from its first on
// and no flush waits, is not settled: its records are on disk only again,
// the oldest, for the exporter to send again; it then reports false, so
// that the exporter waits a schedule delay before it tries again.
func (p *Pipeline) settle(from uint64, n, missing, rejected int, err error, final bool) bool {
	sent := n - missing
	p.mu.Lock()
	if err != nil {
		p.lastErr, p.lastAt = err, time.Now()
	}
	again := !final && p.journal != nil && p.lastBare <= from && Unanswered(err, rejected, sent)
	if again {
		p.respill(from)
		p.mu.Unlock()
		return false
	}
	p.counts.Exported += uint64(sent - rejected)
	p.counts.Failed += uint64(rejected + missing)
	p.counts.JournalLost += uint64(missing)
	p.obs.fail(err, rejected)
	p.obs.fail(errJournalLost, missing)
	if p.journal != nil {
		p.journal.Settle(n, Unanswered(err, rejected, sent))
	}
	p.mu.Unlock()
	p.progress.broadcast()
	p.room.broadcast()
	return true
}

// JournalLostType is the error type of the records failed because the
// journal lost their only copy.
const JournalLostType = "spool_lost"

// errJournalLost fails the records the journal lost: not an export's
// failure, whatever the last export's error was.
var errJournalLost = journalLostError{}

type journalLostError struct{}

func (journalLostError) Error() string {
	return "the journal lost their only copy: its file was cut or failed under the process"
}

func (journalLostError) ErrorType() string { return JournalLostType }

// take moves the exporter on by n records.
func (p *Pipeline) take(n int) {
	p.next += uint64(n)
	p.handedOn = max(p.handedOn, p.next)
}

// respill puts the exporter back at record from: the records of the
// export that started there are on disk only again, before the others.
func (p *Pipeline) respill(from uint64) {
	p.deferred += p.next - from
	p.next = from
}

// copyOut builds req's body, which reads a journal's mapped files: a fault
// there (a file cut under its mapping) is an error, not the process's end.
func copyOut(req *otlpwire.Request) (body []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading the spool back: %v", r)
		}
	}()
	return req.Bytes(), nil
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
