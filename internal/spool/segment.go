package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// segment is one of this process's files, mapped. Its fields are the
// pipeline's, under its lock, but for the housekeeper's: made, then handed
// over as the spare; retired, then handed back to be removed.
type segment struct {
	path string
	fd   int
	mem  []byte

	off        int         // where the next frame goes
	first      uint64      // the spool's number of its first record
	written    uint64      // records in it
	decided    uint64      // of those, the oldest so many had their fate told
	kept       uint64      // of those, kept for a later process: no collector answered
	marker     walk        // where marking got to: see recordAt
	reader     walk        // where reading back got to: see Spool.Replay
	sealed     bool        // full: no record goes in any more
	fault      error       // what faulted in its mapping; set, it is not touched again
	unreadable bool        // reading it back faulted where the frames after it cannot be found (a cut): its records are not read again
	lost       uint64      // records found unreadable when read back: their only copy was here
	lostTo     uint64      // 1 + the number in it of the latest counted in lost: a record read back again is not counted again
	lostTold   bool        // lost was told
	last       byte        // see readBack
	cutSeen    atomic.Bool // its file was found cut: see Spool.handleCuts
	cutDone    bool        // handled
	touched    bool        // every page was written through the mapping since it was made or cooled
	hasScope   []bool      // scopes whose frame it holds
}

// segName names the seq-th segment of the process with prefix
// "<pid>-<start nanos>-". Names sort in the order a process made them.
func segName(prefix string, seq int) string {
	return fmt.Sprintf("%s%08d.seg", prefix, seq)
}

// A segmentName is what a segment's file name says: its maker's process
// id and start, and its place among that process's segments.
type segmentName struct {
	prefix  string // "<pid>-<created>-"
	pid     int
	created int64 // Unix nanoseconds
	seq     int
}

// parseName reads a segment's file name, as segName writes it.
func parseName(name string) (segmentName, bool) {
	base, found := strings.CutSuffix(name, ".seg")
	if !found {
		return segmentName{}, false
	}
	pid, rest, ok1 := strings.Cut(base, "-")
	created, seq, ok2 := strings.Cut(rest, "-")
	n := segmentName{prefix: pid + "-" + created + "-"}
	var err1, err2, err3 error
	n.pid, err1 = strconv.Atoi(pid)
	n.created, err2 = strconv.ParseInt(created, 10, 64)
	n.seq, err3 = strconv.Atoi(seq)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil {
		return segmentName{}, false
	}
	return n, true
}

// makeSegment creates, locks, allocates and maps a segment of size bytes,
// writes its header and resource frame, touches every page so that the
// logging call takes no page fault, and only then gives it its name: a file
// with a segment's name is always whole and always locked by a live owner
// or by none.
func makeSegment(dir, name string, size, pid int, created int64, resource []byte) (seg *segment, err error) {
	path := filepath.Join(dir, name)
	tmp := filepath.Join(dir, "."+name+".tmp")
	fd, err := syscall.Open(tmp, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: tmp, Err: err}
	}
	fail := func(op string, e error) (*segment, error) {
		syscall.Unlink(tmp)
		syscall.Close(fd)
		return nil, &os.PathError{Op: op, Path: tmp, Err: e}
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail("lock", err)
	}
	// Blocks are taken now, so that a full disk shows here, as an error,
	// and not later as a SIGBUS in the logging call; zeros written through
	// the page cache make the pages' first faults cheap (a fault on a page
	// of an allocated but unwritten block costs ten times more).
	if err := fallocate(fd, int64(size)); err != nil {
		return fail("allocate", err)
	}
	if err := writeZeros(fd, size); err != nil {
		return fail("write", err)
	}
	mem, err := syscall.Mmap(fd, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fail("mmap", err)
	}
	seg = &segment{path: path, fd: fd, mem: mem}
	if err := seg.prepare(size, pid, created, resource); err != nil {
		syscall.Munmap(mem)
		return fail("write", err)
	}
	if err := publish(tmp, path); err != nil {
		syscall.Munmap(mem)
		return fail("link", err)
	}
	return seg, nil
}

// publish gives the file made under tmp the name path, unless a file has
// that name already: a name is never taken from another file, whatever
// made two spools choose it. Where the file system has no hard links, it
// renames.
func publish(tmp, path string) error {
	switch err := syscall.Link(tmp, path); err {
	case nil:
		// A death before the unlink leaves a second name, which the next
		// start removes as a file being made.
		syscall.Unlink(tmp)
		return nil
	case syscall.EPERM, syscall.EOPNOTSUPP:
		return syscall.Rename(tmp, path)
	default:
		return err
	}
}

// fallocate takes the blocks of a file of size bytes.
func fallocate(fd int, size int64) error {
	for {
		err := syscall.Fallocate(fd, 0, 0, size)
		if err != syscall.EINTR {
			return err
		}
	}
}

// zeros is what writeZeros writes, a piece at a time.
var zeros [256 << 10]byte

func writeZeros(fd, size int) error {
	for off := 0; off < size; {
		n, err := syscall.Pwrite(fd, zeros[:min(len(zeros), size-off)], int64(off))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		off += n
	}
	return nil
}

// recycle makes a settled segment of this process the new file name, empty:
// its pages are in memory and mapped already, so that taking it costs the
// logging call no fault, and the housekeeper only a clear of what was
// written. It is renamed out of the way first: a death halfway leaves a
// file the next start removes, never one whose records would be sent again.
func (seg *segment) recycle(dir, name string, pid int, created int64, resource []byte) (err error) {
	path := filepath.Join(dir, name)
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := syscall.Rename(seg.path, tmp); err != nil {
		return &os.PathError{Op: "rename", Path: seg.path, Err: err}
	}
	seg.path = tmp
	if err := seg.clear(); err != nil {
		return err
	}
	if err := seg.prepare(len(seg.mem), pid, created, resource); err != nil {
		return err
	}
	if err := publish(tmp, path); err != nil {
		return &os.PathError{Op: "link", Path: tmp, Err: err}
	}
	seg.path = path
	return nil
}

// setFirst numbers seg's first record n, in its header too: a later
// process orders the files by it. A fault here is the next write's to
// find.
func (seg *segment) setFirst(n uint64) {
	seg.first = n
	_ = guardFault(func() { storeFirst(seg.mem, n) })
}

// left is the records a later process is to send: those kept, and those
// whose fate is not told.
func (seg *segment) left() uint64 { return seg.written - seg.decided + seg.kept }

// mark marks k records settled, from the i-th on, each in its frame.
func (seg *segment) mark(i, k uint64) {
	for ; k > 0; i, k = i+1, k-1 {
		markSettled(seg.mem, seg.recordAt(i))
	}
}

// A walk is a place among a segment's frames: the frame of its at-th
// record, or one before it.
type walk struct {
	off int
	at  uint64
}

// recordAt is the offset of the frame of the i-th record. It walks on from
// the last one found, since records are marked in order: marking costs a
// read of each frame's head once.
func (seg *segment) recordAt(i uint64) int { return seg.walkTo(&seg.marker, i) }

// walkTo moves w to the frame of the i-th record, from the first frame
// when i is behind it, and returns its offset.
func (seg *segment) walkTo(w *walk, i uint64) int {
	if i < w.at {
		*w = walk{off: headerSize}
	}
	for {
		off := w.off
		if isRecord(seg.mem, off) {
			if w.at == i {
				return off
			}
			w.at++
		}
		w.off = off + frameSize(frameLen(seg.mem, off))
	}
}

// record is the scope and the payload of the i-th record, read in place.
func (seg *segment) record(i uint64) (scope int, payload []byte) {
	off := seg.walkTo(&seg.reader, i)
	return int(frameKind(seg.mem, off)), framePayload(seg.mem, off)
}

// readBack is record, a byte of each page of its payload read: a page past
// a cut, or failing, faults here, where the record is counted lost, not
// when the request's body is copied out, which would fail the records with
// it. Every page, not the last alone: a page failing in the middle of a
// record would fault in every copy, and the exporter read it back again
// and again.
func (seg *segment) readBack(i uint64) (scope int, payload []byte) {
	scope, payload = seg.record(i)
	for off := 0; off < len(payload); off += pageSize {
		seg.last = payload[off] // a load, which a blank read is not
	}
	if len(payload) > 0 {
		seg.last = payload[len(payload)-1]
	}
	return scope, payload
}

// lose counts the i-th record lost, once.
func (seg *segment) lose(i uint64) {
	if i >= seg.lostTo {
		seg.lost++
		seg.lostTo = i + 1
	}
}

// cool lets a full file's pages go from the process's memory: through an
// outage the spool holds far more than the queue, and its mapped pages
// count in the process's resident memory. They stay in the page cache,
// dirty ones included (a shared mapping's are the file's), and a read
// faults them back in when their turn comes. Its pages are touched again
// when it is emptied for reuse.
func (seg *segment) cool() {
	if syscall.Madvise(seg.mem, syscall.MADV_DONTNEED) == nil {
		seg.touched = false
	}
}

// guardFault runs f, which touches a mapped file, and returns a fault
// there (the file cut under the mapping, an I/O error) as an error rather
// than letting it kill the process.
func guardFault(f func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fault in the mapped file: %v", r)
		}
	}()
	f()
	return nil
}

// clear zeros what was written, the header's settled count first.
func (seg *segment) clear() error {
	return guardFault(func() {
		storeSettled(seg.mem, 0)
		clear(seg.mem[headerSize:seg.off])
	})
}

// prepare writes the header and the resource frame, touches each page,
// and starts the segment's state afresh, for a new file and for one taken
// again alike. A fault in the mapping (the file cut, an I/O error) is an
// error here.
func (seg *segment) prepare(size, pid int, created int64, resource []byte) error {
	seg.first, seg.written, seg.decided, seg.kept, seg.sealed, seg.unreadable = 0, 0, 0, 0, false, false
	seg.lost, seg.lostTo, seg.lostTold, seg.cutDone = 0, 0, false, false
	seg.cutSeen.Store(false)
	clear(seg.hasScope)
	seg.marker = walk{off: headerSize} // its own records: see recordAt
	seg.reader = seg.marker
	return guardFault(func() {
		mem := seg.mem
		putHeader(mem, size, pid, created)
		seg.off = putFrame(mem, headerSize, kindResource, resource)
		if !seg.touched {
			for i := (seg.off + pageSize - 1) &^ (pageSize - 1); i < len(mem); i += pageSize {
				mem[i] = 0
			}
			seg.touched = true
		}
	})
}

var pageSize = os.Getpagesize()

// close releases the mapping and the file, and with it the lock; remove
// first unlinks it, so that no other process takes an empty file.
func (seg *segment) close(remove bool) error {
	var errs []error
	if remove {
		errs = append(errs, syscall.Unlink(seg.path))
	}
	if seg.mem != nil {
		errs = append(errs, syscall.Munmap(seg.mem))
		seg.mem = nil
	}
	errs = append(errs, syscall.Close(seg.fd))
	return errors.Join(errs...)
}
