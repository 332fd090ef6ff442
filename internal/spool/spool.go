package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	// DefaultMaxBytes bounds the files of one process: the default queue,
	// an export in flight and the files being filled, with room to spare.
	DefaultMaxBytes = 64 << 20
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
	segs    []*segment // holding unsettled records, oldest first; the active one last
	active  *segment   // where records go; nil when stepped aside or full
	waited  bool       // a logging call already waited for the missing spare
	written uint64     // records accepted, journaled or not
	settled uint64     // records settled
	scopes  [][]byte   // scope frames' payloads, by number
	keeping bool       // settled records are kept on disk: see Settle
	closed  bool

	broken atomic.Bool // stepped aside: records go on in memory only
	kept   atomic.Uint64

	hmu    sync.Mutex
	spares []*segment // made ahead or emptied, ready to take over
	dead   []*segment // settled, to remove
	mapped []*segment // every segment made and not removed, to sync
	files  int        // files that exist or are being made
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
	now := time.Now().UnixNano()
	s := &Spool{
		cfg:      cfg,
		pid:      os.Getpid(),
		created:  now,
		prefix:   fmt.Sprintf("%d-%d-", os.Getpid(), now),
		maxFiles: max(2, int(cfg.MaxBytes/int64(cfg.SegmentBytes))),
		resource: resourcePayload(cfg.Resource),
		wake:     make(chan struct{}, 1),
		made:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	var err error
	if err = os.MkdirAll(cfg.Dir, 0o700); err == nil {
		var seg *segment
		if seg, err = s.make(); err == nil {
			s.install(seg)
		}
	}
	if err != nil {
		s.broken.Store(true)
	}
	go s.housekeep()
	return s, err
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

// Append copies a record into the active file. It never waits on the disk:
// when no file is ready, the first call waits at most spareWait for the
// housekeeper's, and the rest go on unprotected until it comes; at the
// bound it refuses the record.
func (s *Spool) Append(scope int, rec []byte) pipeline.Verdict {
	v := s.append(scope, rec)
	if v == pipeline.Unjournaled && s.active != nil {
		// A file holds consecutive records, the way settling counts them:
		// a record left out of it ends it.
		s.active.sealed = true
		s.active = nil
		s.settle()
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
	if s.broken.Load() && !s.resume() {
		return pipeline.Unjournaled
	}
	seg := s.active
	need := s.need(seg, scope, rec)
	if seg == nil || seg.off+need > len(seg.mem) {
		if frameSize(len(s.resource))+frameSize(len(s.scopes[scope]))+frameSize(len(rec)) > s.cfg.SegmentBytes-headerSize {
			return pipeline.Unjournaled // larger than any file: in memory only
		}
		var full bool
		if seg, full = s.rotate(); seg == nil {
			if full && !s.broken.Load() {
				return pipeline.JournalFull
			}
			return pipeline.Unjournaled // no file ready yet: this one in memory
		}
	}
	if !s.write(seg, scope, rec) {
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
	err := guardFault(func() {
		if scope >= len(seg.hasScope) || !seg.hasScope[scope] {
			seg.off = putFrame(seg.mem, seg.off, kindScope, s.scopes[scope])
			for len(seg.hasScope) <= scope {
				seg.hasScope = append(seg.hasScope, false)
			}
			seg.hasScope[scope] = true
		}
		seg.off = putFrame(seg.mem, seg.off, uint32(scope), rec)
	})
	if err != nil {
		seg.sealed = true
		s.stepAside(fmt.Errorf("writing %s: %v", seg.path, err))
		return false
	}
	return true
}

// rotate seals the active file and makes a spare the active one. It
// returns nil when there is none ready, and full when the spool is at its
// bound. It never makes a file itself: that waits on the disk, and rotate
// runs inside a logging call; the housekeeper makes them, and until it has,
// records go on in memory.
func (s *Spool) rotate() (seg *segment, full bool) {
	if a := s.active; a != nil {
		a.sealed = true
		s.active = nil
		s.settle()
	}
	if s.waited && !s.spareReady.Load() {
		// One call waited for the missing file; the ones after it go on
		// unprotected until it comes, rather than each waiting in turn
		// under the pipeline's lock, or taking hmu and waking the
		// housekeeper, which is making it. None is refused as at the
		// bound, even when the file being made is the last under it: it
		// is coming.
		return nil, false
	}
	s.hmu.Lock()
	seg = s.takeSpare()
	full = seg == nil && s.files >= s.maxFiles
	s.hmu.Unlock()
	s.kick()
	if seg == nil && !full {
		seg = s.awaitSpare()
		s.waited = seg == nil
	}
	if seg == nil {
		return nil, full
	}
	s.install(seg)
	return seg, false
}

// spareWait bounds how long a logging call waits for the housekeeper to
// make a file when none is ready: long enough for a local disk (a file
// takes about a millisecond), short enough that a slow one costs a burst a
// few unprotected records rather than a stalled program.
const spareWait = 5 * time.Millisecond

// awaitSpare waits, at most spareWait, for the housekeeper's next file.
func (s *Spool) awaitSpare() *segment {
	timer := time.NewTimer(spareWait)
	defer timer.Stop()
	for {
		select {
		case <-s.made:
		case <-timer.C:
			return nil
		}
		s.hmu.Lock()
		seg := s.takeSpare()
		s.hmu.Unlock()
		if seg != nil {
			return seg
		}
	}
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

// tellMade wakes a rotate waiting for a spare.
func (s *Spool) tellMade() {
	select {
	case s.made <- struct{}{}:
	default:
	}
}

// install makes seg the active file.
func (s *Spool) install(seg *segment) {
	seg.first = s.written
	s.segs = append(s.segs, seg)
	s.active = seg
	s.waited = false
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
	s.say("zaplens: spool %s: writing again; records are protected from here on", s.cfg.Dir)
	return true
}

// stepAside turns the spool off until a new file can be made: records go
// on in memory, counted as unprotected.
func (s *Spool) stepAside(err error) {
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

// Settle marks the n oldest unsettled records settled, in the headers of
// their files; a sealed file all settled goes to the housekeeper to empty
// or remove. With keep, the headers stay as they are, so that those
// records, and all settled after them until a Settle without keep, are
// sent by a later process if this one dies or stops meanwhile.
func (s *Spool) Settle(n int, keep bool) {
	if s.closed {
		return
	}
	s.settled += uint64(n)
	s.keeping = keep
	s.settle()
}

// settle brings the files' headers up to s.settled, unless keeping.
func (s *Spool) settle() {
	if s.keeping {
		return
	}
	for len(s.segs) > 0 {
		seg := s.segs[0]
		done := uint64(0)
		if s.settled > seg.first {
			done = min(s.settled-seg.first, seg.written)
		}
		if done != seg.settled {
			seg.settled = done
			if seg.mem != nil {
				if err := guardFault(func() { storeUint64(seg.mem[offSettled:], done) }); err != nil {
					// The header keeps an older count: a later process
					// sends those records again, none is lost.
					s.stepAside(fmt.Errorf("settling %s: %v", seg.path, err))
				}
			}
		}
		if !seg.sealed || done < seg.written {
			return
		}
		s.segs[0] = nil
		s.segs = s.segs[1:]
		s.hmu.Lock()
		s.dead = append(s.dead, seg)
		s.hmu.Unlock()
		s.kick()
	}
}

// Close stops the housekeeper and releases every file: those all settled,
// and the spares, are removed; the others stay, unlocked, for a later
// process to send.
func (s *Spool) Close(ctx context.Context) {
	if s.closed {
		return
	}
	s.closed = true
	s.settle()
	var kept uint64
	for _, seg := range s.segs {
		kept += seg.written - seg.settled
	}
	s.kept.Store(kept)
	close(s.quit)
	select {
	case <-s.done:
	case <-ctx.Done():
		// The housekeeper is on the disk (making or syncing a file): leave
		// the files to the process's end, which unlocks them for a later
		// one.
		return
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	for _, seg := range s.segs {
		left := seg.written - seg.settled
		if left > 0 && s.cfg.Sync > 0 && seg.mem != nil {
			msync(seg.mem)
		}
		seg.close(left == 0)
	}
	s.segs, s.active = nil, nil
	for _, seg := range s.dead {
		seg.close(true)
	}
	for _, seg := range s.spares {
		seg.close(true)
	}
	s.spares = nil
	s.dead, s.mapped = nil, nil
}

// kick wakes the housekeeper.
func (s *Spool) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// say tells a line from its own goroutine: it may be called in a logging
// call, which must not wait on the writer.
func (s *Spool) say(format string, args ...any) {
	if s.cfg.Say != nil {
		go s.cfg.Say(fmt.Sprintf(format, args...))
	}
}

// makeFile makes a file; tests slow it down.
var makeFile = makeSegment

// make makes a new file, within the bound; it counts it in files.
func (s *Spool) make() (*segment, error) {
	s.hmu.Lock()
	if s.files >= s.maxFiles {
		s.hmu.Unlock()
		return nil, errors.New("at the bound")
	}
	s.files++
	s.seq++
	name := segName(s.prefix, s.seq)
	s.hmu.Unlock()
	if s.broken.Load() {
		_ = os.MkdirAll(s.cfg.Dir, 0o700) // it may be what failed
	}
	seg, err := makeFile(s.cfg.Dir, name, s.cfg.SegmentBytes, s.pid, s.created, s.resource)
	if err == nil && s.cfg.Sync > 0 {
		syncDir(s.cfg.Dir) // outside hmu, which the pipeline's side takes
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
	retry := time.NewTicker(retryInterval)
	defer retry.Stop()
	var syncTick <-chan time.Time
	if s.cfg.Sync > 0 {
		t := time.NewTicker(s.cfg.Sync)
		defer t.Stop()
		syncTick = t.C
	}
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
		}
	}
}

// maxSpares is how many empty files a spool keeps ready. Two, so that the
// file just filled, settled a moment later, is emptied for a later turn
// rather than a new file made for the next: in a steady run no file is
// made at all.
const maxSpares = 2

// reap empties files all settled for reuse, up to maxSpares, and removes
// the others.
func (s *Spool) reap() {
	s.hmu.Lock()
	dead := s.dead
	s.dead = nil
	room := maxSpares - len(s.spares)
	s.hmu.Unlock()
	var removed []*segment
	for _, seg := range dead {
		if room > 0 {
			s.hmu.Lock()
			s.seq++
			name := segName(s.prefix, s.seq)
			s.hmu.Unlock()
			if seg.recycle(s.cfg.Dir, name, s.pid, s.created, s.resource) == nil {
				s.addSpare(seg)
				room--
				continue
			}
		}
		seg.close(true)
		removed = append(removed, seg)
	}
	if len(removed) == 0 {
		return
	}
	s.hmu.Lock()
	s.files -= len(removed)
	s.mapped = without(s.mapped, removed)
	s.hmu.Unlock()
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

// makeSpare makes the next file ahead of need; it reports false when that
// failed for another reason than the bound.
func (s *Spool) makeSpare() bool {
	s.hmu.Lock()
	need := len(s.spares) == 0 && s.files < s.maxFiles
	s.hmu.Unlock()
	if !need {
		return true
	}
	seg, err := s.make()
	if err != nil {
		s.markBroken(err)
		return false
	}
	s.addSpare(seg)
	return true
}

// addSpare makes seg ready to take over, and wakes a rotate waiting for one.
func (s *Spool) addSpare(seg *segment) {
	s.hmu.Lock()
	s.spares = append(s.spares, seg)
	s.spareReady.Store(true) // under hmu, as takeSpare clears it: never true with none
	s.hmu.Unlock()
	s.tellMade()
}

// syncAll writes every file's dirty pages to the disk.
func (s *Spool) syncAll() {
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

// syncDir makes a new file's name survive a power loss.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
