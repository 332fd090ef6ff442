package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// ExportFunc sends one request body of n records and reports how many the
// collector rejected (n when the export failed) and why. final is set for
// the exports of a flush or a shutdown: an endpoint that refuses
// connections is then tried once, not retried.
type ExportFunc func(ctx context.Context, body []byte, n int, final bool) (rejected int, err error)

// Config sizes a pipeline. Zero values take the defaults noted.
type Config struct {
	MaxQueueBytes   int // bytes of records that may wait
	MaxQueueRecords int // records accepted and not yet settled (waiting or in an export); 0: no bound but bytes
	MaxBatchRecords int // most records in one request
	MaxRequestBytes int // most bytes in one request
	ScheduleDelay   time.Duration
	ExportTimeout   time.Duration // one export, given to ExportFunc's ctx
	BlockOnFull     time.Duration // how long a producer waits for room; 0: drop at once
	Resource        otlpwire.Resource
	Export          ExportFunc
	Journal         Journal // keeps a copy of each record until settled, and what the queue has no room for; nil: none
}

// Pipeline queues encoded records and exports them from one goroutine.
// Every method is safe for concurrent use.
type Pipeline struct {
	cfg       Config
	maxRecord int // see MaxRecordBytes; set once, read on every record

	mu      sync.Mutex
	q       queue
	counts  Counts // Queued is derived on read
	stopped bool
	scopes  []otlpwire.Scope
	lastErr error
	lastAt  time.Time // when lastErr happened
	kicked  bool      // the exporter was told a batch is ready
	flushAt uint64    // the highest mark a flush asked for
	flushed time.Time // when the oldest flush not yet done was asked for
	obs     observed  // for the metrics (observe.go)

	journal Journal // cfg.Journal until CloseJournal; nil with none

	// Records are numbered in the order they are accepted, as the journal
	// numbers them, and the exporter takes them in that order: first those
	// the journal holds on disk only, then the queue's.
	next     uint64 // the number of the next record the exporter takes
	deferred uint64 // from next on, records on disk only: see spill
	handedOn uint64 // the highest next so far: records taken by an export once at least
	lastBare uint64 // 1 + the number of the latest record in memory only, without the journal's copy
	memBytes int    // the queue's bound when it can spill: see spillBytes

	kick     chan struct{} // wakes the exporter
	room     signal        // wakes producers waiting for room
	progress signal        // wakes flushes waiting for their mark
	urgent   signal        // tells an export in flight that a flush waits
	full     signal        // tells an export waiting to retry that the queue needs its room
	stop     chan struct{}
	done     chan struct{}
	cancel   context.CancelFunc // ends an export in flight at shutdown
	ctx      context.Context
}

// New starts a pipeline.
func New(cfg Config) *Pipeline {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pipeline{
		cfg:       cfg,
		journal:   cfg.Journal,
		maxRecord: cfg.MaxRequestBytes - otlpwire.Overhead(cfg.Resource, otlpwire.Scope{}) - 1024,
		memBytes:  cfg.MaxQueueBytes,
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		ctx:       ctx,
		cancel:    cancel,
	}
	if cfg.Journal != nil {
		p.memBytes = min(cfg.MaxQueueBytes, spillBytes(cfg.MaxRequestBytes))
	}
	if u, ok := cfg.Journal.(MemoryUser); ok {
		u.UseMemory(memory{p})
	}
	go p.run()
	return p
}

// spillBytes is what the queue keeps in memory with a journal: the
// exporter's next two requests. The journal holds every record already;
// what waits longer, while the collector is away, waits there only, so
// that an outage costs the process no more memory than a healthy run.
func spillBytes(maxRequestBytes int) int { return 2 * maxRequestBytes }

// AddScope registers an encoded scope and returns its number for Enqueue.
func (p *Pipeline) AddScope(s otlpwire.Scope) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scopes = append(p.scopes, s)
	if p.journal != nil {
		p.journal.AddScope(len(p.scopes)-1, s)
	}
	return len(p.scopes) - 1
}

// MaxRecordBytes is the largest record a request can carry; a larger one
// must be cut before it is enqueued.
func (p *Pipeline) MaxRecordBytes() int { return p.maxRecord }

// Enqueue copies a record into the queue; cut says its values were cut to
// fit a request, for the count. With a journal, when the queue has no room
// the records it holds are left to the journal's copies: the disk is the
// queue's overflow. It reports false when the record was dropped: the queue
// stayed full for the configured wait, the journal is at its bound, or the
// pipeline is stopped. It never waits on the network.
func (p *Pipeline) Enqueue(scope int, rec []byte, cut bool) bool {
	p.mu.Lock()
	if p.overflows(len(rec)) {
		p.spill()
	}
	ok := p.push(scope, rec)
	if cut {
		p.counts.Cut++
	}
	if !ok {
		p.counts.Dropped++
		if p.stopped {
			p.obs.droppedStopped++
		}
	}
	p.mu.Unlock()
	return ok
}

// overflows tells, under the lock, whether the queue is to spill for a
// record of n bytes: with a journal, when the queue has no room for it and
// the journal holds every record the queue does (none went on in memory
// only while it stepped aside).
func (p *Pipeline) overflows(n int) bool {
	return p.spillable() && p.q.records > 0 && !p.admit(n) && !p.stopped
}

// spillable tells, under the lock, whether the journal holds a copy of
// every record in the queue.
func (p *Pipeline) spillable() bool {
	return p.journal != nil && p.lastBare <= p.next+p.deferred
}

// queueBytes is the queue's bound, under the lock: what the exporter's
// next requests take when the queue can spill (see spillBytes), and
// MaxQueueBytes when it cannot, as without a journal.
func (p *Pipeline) queueBytes() int {
	if p.spillable() {
		return p.memBytes
	}
	return p.cfg.MaxQueueBytes
}

// spill leaves the queue's records to the journal's copies: the exporter
// reads them back from there in their turn, before the queue's next ones.
// They stay counted as queued until they are settled.
func (p *Pipeline) spill() {
	p.deferred += uint64(p.q.records)
	p.q.drop()
}

// push puts a record in the queue, and its copy in the journal; it reports
// false when the record was dropped. It is called with the lock held, and
// returns with it held.
func (p *Pipeline) push(scope int, rec []byte) bool {
	ok := p.admit(len(rec))
	if !ok && !p.stopped {
		// The export waiting to retry holds the oldest records: they give
		// way, so that this one and those after it find room.
		p.full.broadcast()
	}
	if !ok && p.cfg.BlockOnFull > 0 && !p.stopped {
		p.mu.Unlock()
		ok = p.waitForRoom(len(rec))
	}
	// Counted once its fate is decided, so that a record waiting for room
	// is in no count yet and every identity holds at every read.
	p.counts.Emitted++
	if ok && p.journal != nil {
		switch p.journal.Append(scope, rec) {
		case Unjournaled:
			p.counts.Unprotected++
			p.lastBare = p.enqueued()
		case JournalFull:
			ok = false
		}
	}
	if ok {
		p.q.push(scope, rec)
		if !p.kicked && p.batchReady() {
			p.kicked = true
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}
	}
	return ok
}

// admit tells, under the lock, whether a record of n bytes fits.
func (p *Pipeline) admit(n int) bool {
	if p.stopped {
		return false
	}
	held := p.enqueued() - p.settled() // waiting or in an export
	if p.spillable() {
		held = uint64(p.q.records) // the journal holds the others
	}
	if p.cfg.MaxQueueRecords > 0 && held >= uint64(p.cfg.MaxQueueRecords) {
		return false
	}
	return p.q.bytes+n+headerSize <= p.queueBytes() || p.q.records == 0
}

// waitForRoom waits, without the lock, at most BlockOnFull for room; it
// returns with the lock held.
func (p *Pipeline) waitForRoom(n int) bool {
	timer := time.NewTimer(p.cfg.BlockOnFull)
	defer timer.Stop()
	for {
		ch := p.room.channel()
		p.mu.Lock()
		if p.admit(n) {
			return true
		}
		if p.stopped {
			return false
		}
		p.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			p.mu.Lock()
			return p.admit(n)
		}
	}
}

func (p *Pipeline) batchReady() bool {
	return p.q.records >= p.cfg.MaxBatchRecords || p.q.bytes >= p.cfg.MaxRequestBytes/2
}

// FlushWaiting is how long the oldest flush not yet done has waited, zero
// when every flush is done: a flush that outlived its caller's deadline
// means a collector that does not answer.
func (p *Pipeline) FlushWaiting() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flushAt <= p.settled() {
		return 0
	}
	return time.Since(p.flushed)
}

// Counts returns the counts as they are now, consistent with each other.
func (p *Pipeline) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.countsLocked()
}

// countsLocked is the counts, Queued worked out; p.mu is held.
func (p *Pipeline) countsLocked() Counts {
	c := p.counts
	c.Queued = p.enqueued() - p.settled()
	return c
}

// LastFailure is when the latest export error happened, and the error,
// nil if there was none.
func (p *Pipeline) LastFailure() (time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastAt, p.lastErr
}

// Urgent returns a channel that closes when a flush or the shutdown starts
// waiting: an export that was retrying should then give way to the flush's
// own attempt.
func (p *Pipeline) Urgent() <-chan struct{} { return p.urgent.channel() }

// Full returns a channel that closes when the queue next turns a record
// away for want of room: an export that is waiting to retry should then
// give up, its records the oldest, so that the exporter takes newer ones
// and the queue has room again. Take it when an export starts.
func (p *Pipeline) Full() <-chan struct{} { return p.full.channel() }

// Flush exports every record accepted before the call, and waits for that
// until ctx is done. An endpoint that refuses connections is tried once per
// request, not retried. A flush cut short by ctx goes on in the background.
func (p *Pipeline) Flush(ctx context.Context) error {
	p.mu.Lock()
	mark := p.enqueued()
	if p.settled() >= mark {
		p.mu.Unlock()
		return nil
	}
	if p.flushAt <= p.settled() {
		p.flushed = time.Now()
	}
	p.flushAt = max(p.flushAt, mark)
	p.mu.Unlock()
	p.urgent.broadcast()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	for {
		ch := p.progress.channel()
		p.mu.Lock()
		reached := p.settled() >= mark
		p.mu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return errors.New("pipeline stopped")
		}
	}
}

// Shutdown refuses later records, exports what is queued as a flush does,
// and stops the exporter, by ctx's deadline; an export still in flight then
// is cancelled and what it held counted as failed, and what still waits
// stays counted as queued.
func (p *Pipeline) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	already := p.stopped
	p.stopped = true
	p.mu.Unlock()
	p.room.broadcast()
	if already {
		select {
		case <-p.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := p.Flush(ctx)
	close(p.stop)
	if err != nil {
		p.cancel()
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.cancel()
		err = ctx.Err()
	}
	return err
}

// accepted is enqueued, under the lock.
func (p *Pipeline) accepted() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.enqueued()
}

// enqueued is how many records were accepted so far: the marks flushes wait
// for.
func (p *Pipeline) enqueued() uint64 { return p.counts.Emitted - p.counts.Dropped }

// settled is how many accepted records were exported or failed so far.
func (p *Pipeline) settled() uint64 { return p.counts.Exported + p.counts.Failed }
