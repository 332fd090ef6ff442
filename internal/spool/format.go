package spool

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// A spool file, a segment, has a fixed size, allocated when it is made. It
// starts with a header, then holds frames one after the other; the rest is
// zeros. All numbers are in the byte order of the machine that wrote them:
// a spool is read on the machine it was written on.
//
//	header (64 bytes)
//	  0  magic "zlspool\n"
//	  8  version uint32: 2; 1 had no marks
//	 12  header size uint32 (where frames start)
//	 16  settled uint64: records, counted from the first, that need not be sent
//	 24  size uint64: the file's size as made
//	 32  pid uint32
//	 40  created int64, Unix nanoseconds
//	 48  written uint64: records put in the file
//	 56  first uint64: the writer's number of the file's first record
//	     (its records are numbered from 0 in the order they were logged)
//	frame
//	  0  length uint32 of the payload, written last: 0 ends the frames;
//	     settledBit set in a record's marks it settled past the header's count
//	  4  crc32c uint32 of the kind and the payload
//	  8  kind uint32: a scope's number for a record; kindResource, kindScope
//	 12  payload, then zeros up to a multiple of 4
//
// The header's count covers the records before the first one kept for a
// later process (no collector answered for it); the records settled after
// it carry the mark in their frames, set by one aligned store.
//
// A later process sends one process's files in the order of their first
// records, not of their names: a file takes its name when it is made or
// emptied, before it is filled, and the records of a file cut under its
// writer that the queue still held are journaled again in a file made
// after those holding later records. Writers before this count left it 0:
// their files go by name.
//
// The written count lets a later process tell a file cut short under its
// writer (truncated, or failing past a page) from one whose writer died:
// it finds fewer records than the header counts, and the others, unsettled,
// are lost with the pages they were on.
//
// A record's payload is a LogRecord's content as the pipeline encodes it.
// The first frame is the resource (kindResource: uint32 length, field,
// schema URL); a scope (kindScope: uint32 number, uint32 length, field,
// schema URL) comes before the first record of its number in each
// segment, so that every segment can be sent alone.

const (
	magic      = "zlspool\n"
	version    = 2
	headerSize = 64
	frameHead  = 12

	offVersion = 8
	offHeader  = 12
	offSettled = 16
	offSize    = 24
	offPID     = 32
	offCreated = 40
	offWritten = 48
	offFirst   = 56

	kindResource = 0xFFFFFFFF
	kindScope    = 0xFFFFFFFE
	// kinds at kindFirst and above are not records.
	kindFirst = 0xFFFFFF00

	// settledBit marks a record settled in its frame's length: no frame is
	// that long.
	settledBit = 1 << 31
)

var (
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
	order      = binary.NativeEndian
)

// frameSize is the bytes a frame of a payload of n bytes takes.
func frameSize(n int) int { return frameHead + (n+3)&^3 }

// putFrame writes a frame at off of mem, which must have room for it, and
// returns the offset after it. The length goes last, in one aligned store,
// so that a frame cut short by the death of the process reads as no frame.
func putFrame(mem []byte, off int, kind uint32, payload []byte) int {
	body := mem[off+8 : off+frameHead+len(payload)]
	order.PutUint32(body, kind)
	copy(body[4:], payload)
	order.PutUint32(mem[off+4:], crc32.Update(0, castagnoli, body))
	storeUint32(mem[off:], uint32(len(payload)))
	return off + frameSize(len(payload))
}

// storeUint32 stores v at b[0:4], aligned, in one atomic store.
func storeUint32(b []byte, v uint32) {
	_ = b[3]
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&b[0])), v)
}

// storeUint64 stores v at b[0:8], aligned, in one atomic store.
func storeUint64(b []byte, v uint64) {
	_ = b[7]
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&b[0])), v)
}

// storeSettled stores the header's settled count in mem, a mapped
// segment, in one atomic store.
func storeSettled(mem []byte, n uint64) { storeUint64(mem[offSettled:], n) }

// storeWritten stores the header's written count in mem, a mapped segment,
// in one atomic store.
func storeWritten(mem []byte, n uint64) { storeUint64(mem[offWritten:], n) }

// storeFirst stores the header's number of the file's first record in
// mem, a mapped segment, in one atomic store.
func storeFirst(mem []byte, n uint64) { storeUint64(mem[offFirst:], n) }

// writeSettled writes the header's settled count to the file fd, as the
// shipper settles a file it does not map; not into a file cut short of its
// header, which the write would grow again into one that is no spool file.
func writeSettled(fd int, n uint64) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Size < headerSize {
		return errNotSegment
	}
	var b [8]byte
	order.PutUint64(b[:], n)
	_, err := syscall.Pwrite(fd, b[:], offSettled)
	return err
}

// MarkNewer writes into the spool file at path a format version past this
// one's, as a later zaplens would have written it: for the tests of what
// a process does with a file it cannot read.
func MarkNewer(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	var b [4]byte
	order.PutUint32(b[:], version+1)
	_, err = f.WriteAt(b[:], offVersion)
	return errors.Join(err, f.Close())
}

// putHeader writes a new segment's header.
func putHeader(mem []byte, size, pid int, created int64) {
	copy(mem, magic)
	order.PutUint32(mem[offVersion:], version)
	order.PutUint32(mem[offHeader:], headerSize)
	order.PutUint64(mem[offSize:], uint64(size))
	order.PutUint32(mem[offPID:], uint32(pid))
	order.PutUint64(mem[offCreated:], uint64(created))
	order.PutUint64(mem[offWritten:], 0)
	order.PutUint64(mem[offFirst:], 0)
}

// resourcePayload is the payload of a resource frame.
func resourcePayload(r otlpwire.Resource) []byte {
	field, url := r.Raw()
	b := order.AppendUint32(nil, uint32(len(field)))
	b = append(b, field...)
	return append(b, url...)
}

// scopePayload is the payload of a scope frame.
func scopePayload(i int, s otlpwire.Scope) []byte {
	field, url := s.Raw()
	b := order.AppendUint32(nil, uint32(i))
	b = order.AppendUint32(b, uint32(len(field)))
	b = append(b, field...)
	return append(b, url...)
}

var errBadPayload = errors.New("bad payload")

func parseResource(p []byte) (otlpwire.Resource, error) {
	if len(p) < 4 {
		return otlpwire.Resource{}, errBadPayload
	}
	n := order.Uint32(p)
	if uint64(n) > uint64(len(p)-4) { // as uint64: an int of 32 bits may not hold n
		return otlpwire.Resource{}, errBadPayload
	}
	var field []byte
	if n > 0 {
		field = p[4 : 4+n]
	}
	return otlpwire.ResourceFromRaw(field, string(p[4+n:])), nil
}

func parseScope(p []byte) (uint32, otlpwire.Scope, error) {
	if len(p) < 8 {
		return 0, otlpwire.Scope{}, errBadPayload
	}
	i := order.Uint32(p)
	n := order.Uint32(p[4:])
	if uint64(n) > uint64(len(p)-8) { // as in parseResource
		return 0, otlpwire.Scope{}, errBadPayload
	}
	var field []byte
	if n > 0 {
		field = p[8 : 8+n]
	}
	return i, otlpwire.ScopeFromRaw(field, string(p[8+n:])), nil
}

// frame is one frame read back.
type frame struct {
	kind    uint32
	payload []byte
}

// contents is what a segment holds, read back.
type contents struct {
	settled  uint64 // records that need not be sent
	resource otlpwire.Resource
	// scopes are numbered from 0 as parse first meets each, and a record's
	// kind is its scope's number here, not the file's: a request groups
	// records by numbers it can index a slice with.
	scopes  []otlpwire.Scope
	places  map[uint32]uint32 // the file's scope numbers to these
	records []frame           // every sound record frame, the settled ones included (with a nil payload), when kept
	unsent  uint64            // sound records past the settled ones
	torn    int               // torn or corrupt frames, and junk after the last frame
	found   uint64            // sound record frames, settled or not
	written uint64            // records the header counts put in the file; 0: unknown
	first   uint64            // the writer's number of its first record; 0 too in files of writers before it
	size    int               // the file's size as made
}

// lost is the records the header counts that are neither found nor
// settled: those on pages cut off the file, or in frames corrupted.
// Settled records past the cut that carried their own mark (after a kept
// one) cannot be told from unsettled ones: the count is an upper bound
// then.
func (c *contents) lost() uint64 {
	return c.written - min(c.written, max(c.found, c.settled))
}

// place is the number in c.scopes of the scope the file numbers k; a scope
// whose frame is missing or corrupt is the empty one.
func (c *contents) place(k uint32) uint32 {
	n, ok := c.places[k]
	if !ok {
		n = uint32(len(c.scopes))
		c.places[k] = n
		c.scopes = append(c.scopes, otlpwire.Scope{})
	}
	return n
}

var errNotSegment = errors.New("not a spool file: bad header")

// errNewerVersion is a file of a later zaplens's format: left as it is,
// for that version to send, not taken for junk and removed.
var errNewerVersion = errors.New("a spool file of a newer format: left for the zaplens that wrote it")

// parse reads a segment's bytes. Every complete frame before a torn or
// corrupt one is kept; a corrupt frame whose length is sound is skipped
// when a sound frame follows it, and reading stops otherwise. Without keep
// the records are only counted: a count that kept them, to drop them,
// would allocate as much as the sending.
func parse(b []byte, keep bool) (*contents, error) {
	if len(b) < headerSize || string(b[:len(magic)]) != magic {
		return nil, errNotSegment
	}
	switch v := order.Uint32(b[offVersion:]); {
	case v > version:
		return nil, errNewerVersion
	case v < 1:
		return nil, errNotSegment
	}
	start := framesStart(b)
	size := int(order.Uint64(b[offSize:]))
	if start < headerSize || start > len(b) || start%4 != 0 {
		return nil, errNotSegment
	}
	c := &contents{
		settled: order.Uint64(b[offSettled:]),
		places:  map[uint32]uint32{},
		size:    size,
	}
	if start >= offFirst+8 {
		c.written, c.first = order.Uint64(b[offWritten:]), order.Uint64(b[offFirst:])
	}
	end := len(b)
	if size >= start && size < end {
		// Bytes past the size the file was made with are junk.
		if !allZero(b[size:]) {
			c.torn++
		}
		end = size
	}
	record := func(f frame) {
		if c.found >= c.settled && f.payload != nil {
			c.unsent++
		}
		c.found++
		if keep {
			c.records = append(c.records, f)
		}
	}
	off := start
	for off+frameHead <= end {
		word := order.Uint32(b[off:])
		if word&^settledBit == 0 {
			break
		}
		f, next, ok := readFrame(b[:end], off)
		if !ok {
			c.torn++
			if next+frameHead > end || !sound(b[:end], next) {
				// The length cannot be trusted: stop here, and count
				// what follows as part of the same tear.
				return c, nil
			}
			// Not counted as a record, whatever its kind reads: that
			// is corrupt too. So a record after it may be counted
			// below its place, and one the count leaves unsent taken
			// for settled, but a settled one never sent again.
			off = resync(b[:next], off)
			continue
		}
		switch f.kind {
		case kindResource:
			if r, err := parseResource(f.payload); err == nil {
				c.resource = r
			} else {
				c.torn++
			}
		case kindScope:
			if i, s, err := parseScope(f.payload); err == nil {
				c.scopes[c.place(i)] = s
			} else {
				c.torn++
			}
		default:
			switch {
			case f.kind >= kindFirst:
				c.torn++
			case word&settledBit != 0:
				record(frame{}) // settled after a record kept
			default:
				record(frame{kind: c.place(f.kind), payload: f.payload})
			}
		}
		off = next
	}
	if off < end && !allZero(b[off:end]) {
		c.torn++ // a frame cut before its length was written, or junk
	}
	return c, nil
}

// frameKind is the kind of the frame at off: a record's scope number, or
// kindResource or kindScope.
func frameKind(b []byte, off int) uint32 { return order.Uint32(b[off+8:]) }

// isRecord tells whether the frame at off holds a record.
func isRecord(b []byte, off int) bool { return frameKind(b, off) < kindFirst }

// framePayload is the payload of the frame at off, which must be whole.
func framePayload(b []byte, off int) []byte {
	return b[off+frameHead : off+frameHead+frameLen(b, off)]
}

// markSettled sets the settled mark in the length of the frame at off, by
// one aligned store.
func markSettled(b []byte, off int) { storeUint32(b[off:], order.Uint32(b[off:])|settledBit) }

// framesStart is where b's frames start: the header's size, unless that
// word is damaged. The first frame is the resource, so a size that does
// not lead to one, while the only size any version has written does, is
// taken for a damaged word: trusted, it would skip frames (the scopes'
// among them, which the records after them need).
func framesStart(b []byte) int {
	start := int(order.Uint32(b[offHeader:]))
	if start != headerSize && !resourceAt(b, start) && resourceAt(b, headerSize) {
		return headerSize
	}
	return start
}

// resourceAt tells whether a sound resource frame is at off.
func resourceAt(b []byte, off int) bool {
	if off < headerSize || off%4 != 0 || off+frameHead > len(b) {
		return false
	}
	f, _, ok := readFrame(b, off)
	return ok && f.kind == kindResource
}

// frameLen is the body length of the frame at off, its settled mark
// taken off.
func frameLen(b []byte, off int) int { return int(order.Uint32(b[off:]) &^ settledBit) }

// readFrame reads the frame at off, and reports whether it is whole and
// its checksum right, and where the next frame would start: len(b) when
// the length runs past the end (off plus such a length may not fit an int
// of 32 bits). A frame that is not whole or right still gives its kind.
func readFrame(b []byte, off int) (f frame, next int, ok bool) {
	n := frameLen(b, off)
	kind := frameKind(b, off)
	if n > len(b)-off-frameHead {
		return frame{kind: kindFirst}, len(b), false
	}
	next = off + frameSize(n)
	body := b[off+8 : off+frameHead+n]
	if crc32.Update(0, castagnoli, body) != order.Uint32(b[off+4:]) {
		return frame{kind: kind}, next, false
	}
	return frame{kind: kind, payload: body[4:]}, next, true
}

// resync is where reading goes on after the corrupt frame at off, whose
// length leads to a sound frame at len(b): the first sound frame after
// off. The checksum does not cover a frame's length, so a damaged length
// may leap over sound frames (a scope's among them, which the records
// after it need) to one that happens to start where it lands. The search
// checksums at most resyncWork bytes, so that a file crafted with many
// long plausible lengths costs milliseconds, not minutes; past that it
// trusts the length.
func resync(b []byte, off int) int {
	work := 0
	for at := off + 4; at+frameHead <= len(b); at += 4 {
		n := frameLen(b, at)
		if n == 0 || n > len(b)-at-frameHead {
			continue
		}
		if work += n; work > resyncWork {
			break
		}
		if _, _, ok := readFrame(b, at); ok {
			return at
		}
	}
	return len(b)
}

const resyncWork = 16 << 20

// sound tells whether a whole frame with the right checksum, or the end of
// the frames, is at off.
func sound(b []byte, off int) bool {
	if order.Uint32(b[off:]) == 0 {
		return true
	}
	_, _, ok := readFrame(b, off)
	return ok
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if order.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
