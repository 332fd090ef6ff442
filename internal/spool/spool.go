package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
)

// Defaults of a spool.
const (
	// DefaultSegmentBytes is the size of one file: large enough for any
	// record a default request carries.
	DefaultSegmentBytes = 4 << 20
	// DefaultMaxBytes bounds the files of one process. They hold what
	// the queue has no room for while the collector is away: at 10,000
	// lines a second, about 1.1 MB a second, so that 128 MiB rides out
	// an outage of about two minutes (docs/spool.md).
	DefaultMaxBytes = 128 << 20
)

// retryInterval is how often a spool that stepped aside tries again.
var retryInterval = 10 * time.Second

// Config is a spool's.
type Config struct {
	Dir          string
	MaxBytes     int64         // this process's files together; 0: DefaultMaxBytes
	SegmentBytes int           // one file; 0: DefaultSegmentBytes
	Sync         time.Duration // how often to write dirty pages to the disk (msync); 0: never
	Resource     otlpwire.Resource
	// Say tells one line, from any goroutine: that the spool stepped aside,
	// or came back. Nil: nowhere.
	Say func(string)
}

// Spool is a [pipeline.Journal] that keeps each record in a mapped file
// until it is settled. Its journal methods run under the pipeline's lock,
// which guards its state; the housekeeper goroutine makes files ahead of
// need, removes settled ones and syncs, and touches only what hmu guards.
type Spool struct {
	cfg      Config
	prefix   string // "<pid>-<start nanos>-"
	pid      int
	created  int64
	maxFiles int
	resource []byte // the resource frame's payload

	// Under the pipeline's lock.
	segs        []*segment // holding records whose fate is not all told, oldest first; the active one last
	held        []*segment // sealed, every fate told, some records kept for a later process: oldest first
	active      *segment   // where records go; nil when stepped aside or full
	written     uint64     // records accepted, journaled or not
	decided     uint64     // records whose fate Settle told
	unprotected uint64     // records accepted without a copy
	tooLarge    bool       // a record larger than any file was told
	fullTold    bool       // the bound was told
	scopes      [][]byte   // scope frames' payloads, by number
	closed      bool

	memory  pipeline.Memory // the queue, to journal again what a cut file held; nil: none
	cutSeen atomic.Bool     // a file was found cut: see handleCuts

	broken atomic.Bool // stepped aside: records go on in memory only
	kept   atomic.Uint64
	teller teller // tells Config.Say's lines, in order

	hmu    sync.Mutex
	spares []*segment // made ahead or emptied, ready to take over
	dead   []*segment // settled, to remove
	mapped []*segment // every segment made and not removed, to sync
	files  int        // files that exist or are being made
	coming int        // files the housekeeper is making, emptying or removing: each becomes a spare or frees a slot
	doomed []*segment // files a logging call could not empty: the housekeeper removes them
	seq    int

	spareReady atomic.Bool
	wake       chan struct{}
	made       chan struct{} // a spare was made: wakes a rotate waiting for one
	quit       chan struct{}
	done       chan struct{}
}

var _ pipeline.Journal = (*Spool)(nil)

// Open makes the directory and the first file, and starts the housekeeper.
// It always returns a spool; when the first file cannot be made, it
// returns an error too, and the spool has stepped aside: records go on in
// memory, counted as unprotected, and it tries again now and then.
func Open(cfg Config) (*Spool, error) {
	if cfg.SegmentBytes <= 0 {
		cfg.SegmentBytes = DefaultSegmentBytes
	}
	cfg.SegmentBytes = (cfg.SegmentBytes + pageSize - 1) &^ (pageSize - 1)
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	s := &Spool{
		cfg:      cfg,
		pid:      os.Getpid(),
		teller:   teller{say: cfg.Say},
		maxFiles: max(2, int(cfg.MaxBytes/int64(cfg.SegmentBytes))),
		resource: resourcePayload(cfg.Resource),
		wake:     make(chan struct{}, 1),
		made:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	var seg *segment
	var err error
	for range maxNameTries {
		s.created = started()
		s.prefix = fmt.Sprintf("%d-%d-", s.pid, s.created)
		s.hmu.Lock()
		name, _ := s.reserve() // the first file: the bound allows two at least
		s.hmu.Unlock()
		if seg, err = s.build(name); !errors.Is(err, syscall.EEXIST) {
			break
		}
	}
	if err == nil {
		s.install(seg)
	} else {
		s.broken.Store(true)
	}
	go s.housekeep()
	return s, err
}

// maxNameTries bounds the starts Open tries when another process's file
// has the name of its first: a process of the same id (in another pid
// namespace) started in the same clock tick.
const maxNameTries = 3

// clock is time.Now; tests make it coarse.
var clock = time.Now

// lastStart is the latest start a spool of this process took.
var lastStart atomic.Int64

// started is a spool's start, in Unix nanoseconds, which names its files
// with the process id: never one another spool of this process took, even
// in the same clock tick.
func started() int64 {
	for {
		last, now := lastStart.Load(), clock().UnixNano()
		now = max(now, last+1)
		if lastStart.CompareAndSwap(last, now) {
			return now
		}
	}
}

// Prefix is the start of the names of this process's files.
func (s *Spool) Prefix() string { return s.prefix }

// Kept is the records left unsettled in the files at Close.
func (s *Spool) Kept() uint64 { return s.kept.Load() }

// AddScope keeps the frame of scope i, to write before its first record in
// each file.
func (s *Spool) AddScope(i int, sc otlpwire.Scope) {
	for len(s.scopes) <= i {
		s.scopes = append(s.scopes, nil)
	}
	s.scopes[i] = scopePayload(i, sc)
}

// Append copies a record into the active file. When it is full, a spare
// made ahead by the housekeeper takes over; when the housekeeper is late
// (a starved CPU, a burst), the call makes the next file itself rather
// than leave records unprotected. At the bound it refuses the record.
func (s *Spool) Append(scope int, rec []byte) pipeline.Verdict {
	v := s.append(scope, rec)
	if v == pipeline.Unjournaled {
		s.unprotected++
		if s.active != nil {
			// A file holds consecutive records, the way settling counts
			// them: a record left out of it ends it.
			s.active.sealed = true
			s.active = nil
			s.release()
		}
	}
	if v != pipeline.JournalFull {
		s.written++
	}
	return v
}

func (s *Spool) append(scope int, rec []byte) pipeline.Verdict {
	if s.closed || scope < 0 || scope >= len(s.scopes) {
		return pipeline.Unjournaled
	}
	s.handleCuts()
	if s.broken.Load() && !s.resume() {
		return pipeline.Unjournaled
	}
	seg := s.active
	need := s.need(seg, scope, rec)
	if seg == nil || seg.off+need > len(seg.mem) {
		if frameSize(len(s.resource))+frameSize(len(s.scopes[scope]))+frameSize(len(rec)) > s.cfg.SegmentBytes-headerSize {
			s.tellTooLarge(len(rec))
			return pipeline.Unjournaled
		}
		var full bool
		if seg, full = s.rotate(); seg == nil {
			if full && !s.broken.Load() {
				s.tellFull()
				return pipeline.JournalFull
			}
			return pipeline.Unjournaled // no file ready yet: this one in memory
		}
	}
	if !s.write(seg, scope, rec) {
		if s.handleCuts(); s.active != seg {
			// The file was cut: the next took over, with the records
			// the queue still held of it, or the next is taken now.
			return s.append(scope, rec)
		}
		return pipeline.Unjournaled
	}
	seg.written++
	return pipeline.Journaled
}

// need is the bytes a record takes in seg, with its scope's frame if seg
// has none yet.
func (s *Spool) need(seg *segment, scope int, rec []byte) int {
	n := frameSize(len(rec))
	if seg == nil || scope >= len(seg.hasScope) || !seg.hasScope[scope] {
		n += frameSize(len(s.scopes[scope]))
	}
	return n
}

// write puts the record, and its scope's frame first if need be, into seg.
// A fault in the mapping (the disk failing under a file) makes the spool
// step aside instead of killing the process.
func (s *Spool) write(seg *segment, scope int, rec []byte) bool {
	if err := s.put(seg, scope, rec); err != nil {
		s.faulted(seg, fmt.Errorf("writing %s: %v", seg.path, err))
		return false
	}
	return true
}

// put is write without the fault's handling.
func (s *Spool) put(seg *segment, scope int, rec []byte) error {
	return guardFault(func() {
		if scope >= len(seg.hasScope) || !seg.hasScope[scope] {
			seg.off = putFrame(seg.mem, seg.off, kindScope, s.scopes[scope])
			for len(seg.hasScope) <= scope {
				seg.hasScope = append(seg.hasScope, false)
			}
			seg.hasScope[scope] = true
		}
		seg.off = putFrame(seg.mem, seg.off, uint32(scope), rec)
		storeWritten(seg.mem, seg.written+1) // after the frame: a death between counts one short, never one that is not there
	})
}

// rotate seals the active file and installs the next. It returns nil when
// there is none: full at the bound, or not full when the spool stepped
// aside.
func (s *Spool) rotate() (seg *segment, full bool) {
	if a := s.active; a != nil {
		a.sealed = true
		s.active = nil
		a.cool()
		s.release()
	}
	seg, full = s.next()
	if seg == nil {
		return nil, full
	}
	s.install(seg)
	return seg, false
}

// next is the file that takes over: a spare the housekeeper made ahead,
// or, when it is late, a settled file emptied or a new one made in the
// call; at the bound, a held file let go. A call waits on the disk only
// when the housekeeper fell behind a burst, for about a millisecond: a
// starved housekeeper must not leave records unprotected. It waits for the
// housekeeper only at the bound, while the housekeeper makes, empties or
// removes a file, and at most maxMadeWait.
func (s *Spool) next() (seg *segment, full bool) {
	for {
		s.hmu.Lock()
		seg = s.takeSpare()
		var dead *segment
		if seg == nil && len(s.dead) > 0 {
			dead = s.dead[0]
			s.dead = s.dead[1:]
		}
		var name string
		room := false
		if seg == nil && dead == nil {
			name, room = s.reserve() // under the lock the housekeeper takes to make one
		}
		coming := s.coming > 0
		s.hmu.Unlock()
		s.kick()
		switch {
		case seg != nil:
			return seg, false
		case dead != nil:
			if seg = s.reuse(dead); seg != nil {
				return seg, false
			}
		case room:
			seg, err := s.build(name)
			if err != nil {
				s.stepAside(err)
			}
			return seg, false
		case len(s.held) > 0:
			if seg = s.evict(); seg != nil {
				return seg, false
			}
		case !coming:
			return nil, true
		default:
			// The housekeeper is making, emptying or removing one. The
			// call holds the pipeline's lock: a disk that stalls the
			// housekeeper must not stall every logging call with it. So
			// the spool steps aside, told, until the file comes.
			if !s.awaitMade() {
				s.stepAside(fmt.Errorf("the housekeeper made no file within %v (a stalled disk)", maxMadeWait))
				return nil, false
			}
		}
	}
}

// maxMadeWait bounds a logging call's wait for the housekeeper at the
// bound: a file takes it about a millisecond to make, a hundred times
// that even on a starved CPU.
const maxMadeWait = 100 * time.Millisecond

// awaitMade waits for the housekeeper to make a file ready, and reports
// false when it has not within maxMadeWait.
func (s *Spool) awaitMade() bool {
	t := time.NewTimer(maxMadeWait)
	defer t.Stop()
	select {
	case <-s.made:
		return true
	case <-t.C:
		return false
	}
}

// evict lets go the oldest held file, to take new records at the bound:
// its kept records were counted as failed when their export failed, and
// live records come first. It says so, with their count.
func (s *Spool) evict() *segment {
	seg := s.held[0]
	s.held[0] = nil
	s.held = s.held[1:]
	s.say("zaplens: spool %s is at its bound (%d MiB): %d records kept for a later process, which this one could not send (counted as failed), are let go to make room",
		s.cfg.Dir, s.cfg.MaxBytes>>20, seg.kept)
	return s.reuse(seg)
}

// reuse empties, in a logging call, a file whose records need no sending
// for a new turn; it returns nil when that failed, and the housekeeper
// removes the file: it alone unmaps files while the spool runs, since it
// syncs them unlocked.
func (s *Spool) reuse(seg *segment) *segment {
	if s.empty(seg) {
		return seg
	}
	s.doom(seg)
	return nil
}

// doom hands seg to the housekeeper to remove.
func (s *Spool) doom(seg *segment) {
	s.hmu.Lock()
	s.doomed = append(s.doomed, seg)
	s.coming++
	s.hmu.Unlock()
	s.kick()
}

// empty makes a file whose records need no sending new and empty, under
// the next name, and reports whether it could. A file whose mapping
// faulted is never taken again: one cut in its middle would fault again.
func (s *Spool) empty(seg *segment) bool {
	if seg.fault != nil {
		return false
	}
	s.hmu.Lock()
	s.seq++
	name := segName(s.prefix, s.seq)
	s.hmu.Unlock()
	return seg.recycle(s.cfg.Dir, name, s.pid, s.created, s.resource) == nil
}

// takeSpare takes a spare file, nil if none is ready. s.hmu is held.
func (s *Spool) takeSpare() (seg *segment) {
	if n := len(s.spares); n > 0 {
		seg = s.spares[n-1]
		s.spares = s.spares[:n-1]
	}
	s.spareReady.Store(len(s.spares) > 0)
	return seg
}

// tellMade wakes a call waiting for the housekeeper's file.
func (s *Spool) tellMade() {
	select {
	case s.made <- struct{}{}:
	default:
	}
}

// install makes seg the active file.
func (s *Spool) install(seg *segment) {
	seg.setFirst(s.written)
	s.segs = append(s.segs, seg)
	s.active = seg
}

// resume takes a file the housekeeper made after the spool stepped aside.
func (s *Spool) resume() bool {
	if !s.spareReady.Load() {
		return false
	}
	s.broken.Store(false)
	if seg, _ := s.rotate(); seg == nil {
		s.broken.Store(true)
		return false
	}
	s.say("zaplens: spool %s: writing again; records are protected from here on (%d went unprotected since the start)", s.cfg.Dir, s.unprotected)
	return true
}

// stepAside turns the spool off until a new file can be made: records go
// on in memory, counted as unprotected. The active file is sealed, so that
// it is released once its records' fates are told, and the files after it
// too.
func (s *Spool) stepAside(err error) {
	if s.active != nil {
		s.active.sealed = true
	}
	s.active = nil
	s.markBroken(err)
}

// markBroken is stepAside's part that the housekeeper may do too, when it
// cannot make a file: the pipeline's side, seeing the spool broken, leaves
// its active file on its next record.
func (s *Spool) markBroken(err error) {
	if s.broken.Swap(true) {
		return
	}
	s.say("zaplens: spool %s stepped aside: %v; logging goes on in memory, without crash protection, until a new file can be made", s.cfg.Dir, err)
}

// Settle tells the fate of the n oldest records not yet told (see
// pipeline.Journal). In a file where no record was kept, settling advances
// the header's count; after a kept record, each settled one is marked in
// its own frame, so that a later process sends the kept and nothing else.
func (s *Spool) Settle(n int, keep bool) {
	if s.closed {
		return
	}
	to := s.decided + uint64(n)
	for _, seg := range s.segs {
		end := min(to, seg.first+seg.written)
		if told := seg.first + seg.decided; end > told {
			s.decide(seg, end-told, keep)
		}
	}
	s.decided = to
	s.handleCuts()
	s.release()
}

// Replay adds to req the records from number from on that the files hold
// (see pipeline.Journal), read in place: a file is not let go before its
// records are settled. A record in no file (the spool had stepped aside)
// or whose pages in its file fault is counted missing.
func (s *Spool) Replay(from uint64, req *otlpwire.Request, max int) (n, missing int) {
	for n < max && from+uint64(n) < s.written && !s.closed {
		i := from + uint64(n)
		seg := s.holding(i)
		added, read := false, false
		if seg != nil && !seg.unreadable {
			err := guardFault(func() { added = req.Add(seg.readBack(i - seg.first)) })
			if read = err == nil; !read {
				s.readFault(seg, i-seg.first, err)
			}
		}
		if !read {
			if seg != nil {
				seg.lose(i - seg.first)
			}
			missing++
		} else if !added {
			break // req is full
		}
		n++
	}
	s.handleCuts()
	return n, missing
}

// readFault handles a fault in reading seg's i-th record back, told once a
// file. A page failing in a payload (an I/O error, the file not cut) loses
// that record alone: the frames after it may read. A frame's head that
// fails hides where every frame after it starts: the file is not read
// again. So it is with a cut: the first head past it fails.
func (s *Spool) readFault(seg *segment, i uint64, err error) {
	if seg.fault == nil {
		s.faulted(seg, fmt.Errorf("reading %s back: %v", seg.path, err))
	}
	seg.unreadable = guardFault(func() { seg.record(i) }) != nil
}

// holding is the file that holds the record of number i, nil if none.
func (s *Spool) holding(i uint64) *segment {
	for _, seg := range s.segs {
		if i >= seg.first && i < seg.first+seg.written {
			return seg
		}
	}
	return nil
}

// decide tells the fate of seg's next k records. A file whose mapping
// faulted is still settled as far as it can be: a file cut in its middle
// keeps its head, and the settled count written there spares a later
// process sending again what was delivered; a fault again is not told
// again (once a file, not once a batch).
func (s *Spool) decide(seg *segment, k uint64, keep bool) {
	var err error
	switch {
	case keep:
		seg.kept += k
	case seg.kept == 0:
		err = guardFault(func() { storeSettled(seg.mem, seg.decided+k) })
	default:
		err = guardFault(func() { seg.mark(seg.decided, k) })
	}
	seg.decided += k
	if err != nil && seg.fault == nil {
		s.faulted(seg, fmt.Errorf("settling %s: %v", seg.path, err))
	}
}

// tellLost says, once a file, how many of its records were lost with it:
// when its records' fates are all told, or at Close.
func (s *Spool) tellLost(seg *segment) {
	if seg.lost > 0 && !seg.lostTold {
		seg.lostTold = true
		s.say("zaplens: spool %s: %s failed under this process (%v): %d log records whose only copy it held are lost, counted as failed (Stats.SpoolLost)",
			s.cfg.Dir, seg.path, seg.fault, seg.lost)
	}
}

// faulted ends a file whose mapping faulted: nothing more goes in, and,
// its fates all told, it is released as any other, so that the files
// after it are too. The file keeps an older state: a later process sends
// those records again, none is lost. A fault in the active file steps
// aside, until the next takes over; one in an older file leaves the active
// file as it is.
func (s *Spool) faulted(seg *segment, err error) {
	seg.sealed, seg.fault = true, err
	if s.noteCut(seg) {
		return // handleCuts's, once the call is done with the files
	}
	if seg == s.active {
		s.stepAside(err)
		return
	}
	s.say("zaplens: spool %s: %v; the file is let go, and records go on in the next", s.cfg.Dir, err)
}

// release hands on the oldest files once no record can come into them and
// every record's fate is told: to the housekeeper to empty or remove, or,
// when some were kept, to the held, which stay for a later process.
func (s *Spool) release() {
	for len(s.segs) > 0 {
		seg := s.segs[0]
		if !seg.sealed || seg.decided < seg.written {
			return
		}
		s.segs[0] = nil
		s.segs = s.segs[1:]
		s.tellLost(seg)
		if seg.kept > 0 {
			seg.cool() // reading its records back brought its pages in
			s.held = append(s.held, seg)
			continue
		}
		s.hmu.Lock()
		s.dead = append(s.dead, seg)
		s.hmu.Unlock()
		s.kick()
	}
}

// tellFull says, the first time, that the spool is at its bound: records
// are dropped from then on until it has room, which the loss report counts.
func (s *Spool) tellFull() {
	if !s.fullTold {
		s.fullTold = true
		s.say("zaplens: spool %s is at its bound (%d MiB) with records the collector has not taken: new records are dropped, counted in Stats.Dropped, until it has room (ZAPLENS_SPOOL_BYTES sets the bound)",
			s.cfg.Dir, s.cfg.MaxBytes>>20)
	}
}

// tellTooLarge says, the first time, that a record larger than any file
// goes on unprotected.
func (s *Spool) tellTooLarge(n int) {
	if !s.tooLarge {
		s.tooLarge = true
		s.say("zaplens: spool %s: a record of %d bytes is larger than a spool file (%d bytes); such records go on in memory, unprotected, counted in Stats.Unprotected",
			s.cfg.Dir, n, s.cfg.SegmentBytes)
	}
}

// Close releases every file, whatever ctx says: those all settled are
// removed, the others stay, unlocked, for a later process (or this one) to
// send. It lets go the pipeline's files, and the housekeeper's that wait
// for it, at once; the housekeeper, as it stops, removes those it is
// making, emptying or removing, and ctx bounds only the wait for that: a
// housekeeper on a stalled disk holds no record.
func (s *Spool) Close(ctx context.Context) {
	if s.closed {
		return
	}
	s.closed = true
	s.release()
	own := append(s.segs, s.held...)
	s.segs, s.held, s.active = nil, nil, nil
	var kept uint64
	for _, seg := range own {
		kept += seg.left()
		s.tellLost(seg)
	}
	s.kept.Store(kept)
	s.hmu.Lock()
	s.mapped = without(s.mapped, own) // the housekeeper syncs them no more
	s.hmu.Unlock()
	for _, seg := range own {
		left := seg.left()
		if left > 0 && s.cfg.Sync > 0 {
			msync(seg.mem)
		}
		seg.close(left == 0)
	}
	s.retire()
	close(s.quit)
	select {
	case <-s.done:
	case <-ctx.Done():
	}
}

// retire removes the files that wait for the housekeeper: at Close, and
// as it stops.
func (s *Spool) retire() {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	for _, seg := range slices.Concat(s.dead, s.doomed, s.spares) {
		seg.close(true)
	}
	s.dead, s.doomed, s.spares, s.mapped = nil, nil, nil, nil
	s.spareReady.Store(false)
}

// kick wakes the housekeeper.
func (s *Spool) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// say tells a line, after those before it, from the teller's goroutine: it
// may be called in a logging call, which must not wait on the writer.
func (s *Spool) say(format string, args ...any) {
	if s.cfg.Say != nil {
		s.teller.tell(fmt.Sprintf(format, args...))
	}
}

// makeFile makes a file; tests slow it down.
var makeFile = makeSegment

// reserve counts a new file in files, within the bound, and names it; hmu
// is held.
func (s *Spool) reserve() (name string, ok bool) {
	if s.files >= s.maxFiles {
		return "", false
	}
	s.files++
	s.seq++
	return segName(s.prefix, s.seq), true
}

// build makes the file reserve named; when that fails, its place in files
// is given back.
func (s *Spool) build(name string) (*segment, error) {
	err := openDir(s.cfg.Dir) // at each file: it may be what failed, or changed hands
	var seg *segment
	if err == nil {
		seg, err = makeFile(s.cfg.Dir, name, s.cfg.SegmentBytes, s.pid, s.created, s.resource)
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if err != nil {
		s.files--
		return nil, err
	}
	s.mapped = append(s.mapped, seg)
	return seg, nil
}

// housekeep empties or removes settled files, keeps a spare ready, retries after the
// spool stepped aside, and syncs when asked to.
func (s *Spool) housekeep() {
	defer close(s.done)
	defer s.retire()
	retry := time.NewTicker(retryInterval)
	defer retry.Stop()
	var syncTick <-chan time.Time
	if s.cfg.Sync > 0 {
		t := time.NewTicker(s.cfg.Sync)
		defer t.Stop()
		syncTick = t.C
	}
	look := time.NewTicker(lookInterval)
	defer look.Stop()
	failed := false // making a file failed: wait for the retry tick
	for {
		s.reap()
		if !failed {
			failed = !s.makeSpare()
		}
		select {
		case <-s.quit:
			return
		case <-s.wake:
		case <-retry.C:
			failed = false
		case <-syncTick:
			s.syncAll()
		case <-look.C:
			s.lookForCuts()
		}
	}
}

// maxSpares is how many empty files a spool keeps ready. Two, so that the
// file just filled, settled a moment later, is emptied for a later turn
// rather than a new file made for the next: in a steady run no file is
// made at all.
const maxSpares = 2

// reap empties files all settled for reuse, up to maxSpares, and removes
// the others, those it could not empty, and the doomed. Each is counted as
// coming until it is a spare or gone, so that a call at the bound waits
// for it rather than refuse its record.
func (s *Spool) reap() {
	s.hmu.Lock()
	dead, doomed := s.dead, s.doomed
	s.dead, s.doomed = nil, nil
	room := maxSpares - len(s.spares)
	s.coming += len(dead)
	s.hmu.Unlock()
	removed := doomed // counted as coming when doomed
	for _, seg := range dead {
		if room == 0 || !s.empty(seg) {
			removed = append(removed, seg)
			continue
		}
		room--
		s.came(seg)
	}
	s.remove(removed)
}

// came ends the coming of a file: a spare, or nil when it came to nothing.
func (s *Spool) came(spare *segment) {
	s.hmu.Lock()
	if spare != nil {
		s.spares = append(s.spares, spare)
		s.spareReady.Store(true) // under hmu, as takeSpare clears it: never true with none
	}
	s.coming--
	s.hmu.Unlock()
	s.tellMade()
}

// remove removes files the housekeeper counted as coming, and forgets
// them.
func (s *Spool) remove(segs []*segment) {
	if len(segs) == 0 {
		return
	}
	for _, seg := range segs {
		seg.close(true)
	}
	s.hmu.Lock()
	s.files -= len(segs)
	s.coming -= len(segs)
	s.mapped = without(s.mapped, segs)
	s.hmu.Unlock()
	s.tellMade()
}

func without(segs, gone []*segment) []*segment {
	out := segs[:0]
	for _, seg := range segs {
		keep := true
		for _, g := range gone {
			keep = keep && seg != g
		}
		if keep {
			out = append(out, seg)
		}
	}
	clear(segs[len(out):])
	return out
}

// makeSpare makes the next file ahead of need, when none is spare and the
// bound leaves room; it reports false when making it failed.
// The file's place is taken under hmu, with the decision, so that a
// logging call making the last file meanwhile finds no room, rather than
// both making one and the housekeeper failing at the bound.
func (s *Spool) makeSpare() bool {
	s.hmu.Lock()
	name, need := "", len(s.spares) == 0
	if need {
		name, need = s.reserve()
	}
	if need {
		s.coming++
	}
	s.hmu.Unlock()
	if !need {
		return true
	}
	seg, err := s.build(name)
	s.came(seg)
	if err != nil {
		s.markBroken(err)
		return false
	}
	return true
}

// syncAll writes every file's dirty pages to the disk.
func (s *Spool) syncAll() {
	syncDir(s.cfg.Dir) // the names of the files made since the last tick
	s.hmu.Lock()
	segs := append([]*segment(nil), s.mapped...)
	s.hmu.Unlock()
	for _, seg := range segs {
		msync(seg.mem)
	}
}

func msync(mem []byte) {
	if len(mem) > 0 {
		syscall.Syscall(syscall.SYS_MSYNC, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), syscall.MS_SYNC)
	}
}

// syncDir makes new files' names survive a power loss. The housekeeper
// alone calls it, at each sync tick: a logging call that makes a file
// holds the pipeline's lock, and a directory's fsync on a busy disk took up
// to 173 ms (BenchmarkNextFileUnderFsyncLoad/syncdir). A variable, so that
// a test can stall it.
var syncDir = func(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
