package pipeline

import (
	"encoding/binary"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// The queue keeps records as bytes in chunks, each record behind a header
// of two uvarints, its scope and its length, so that a queued line costs
// its encoded size and no heap object of its own. Producers append to the
// tail chunk under the pipeline's lock; the exporter takes records from the
// head, reads their bytes outside the lock (producers only ever write past
// what was committed), and gives whole chunks back once a request is built.

// chunkSize is the usual chunk: big enough that a burst costs few
// allocations, small enough that an idle pipeline keeps little.
const chunkSize = 64 << 10

// maxFreeChunks bounds the chunks kept for reuse after a burst: 2 MiB,
// what a default batch of busy-rank lines (8192 × 150 bytes) takes, with
// room for the chunks filling while it is sent.
const maxFreeChunks = 32

type chunk struct {
	buf []byte // committed bytes are buf[:len(buf)]
}

type queue struct {
	chunks  []*chunk // head first; the last is the tail producers append to
	headOff int      // read offset in chunks[0]
	sealed  bool     // the tail takes no more records: the exporter read it to the end
	free    []*chunk
	records int // waiting
	bytes   int // waiting, headers included
}

// headerSize is the most a record header takes: two uvarints.
const headerSize = 2 * binary.MaxVarintLen32

// push appends one record.
func (q *queue) push(scope int, data []byte) {
	need := headerSize + len(data)
	t := q.tail(need)
	start := len(t.buf)
	t.buf = binary.AppendUvarint(t.buf, uint64(scope))
	t.buf = binary.AppendUvarint(t.buf, uint64(len(data)))
	t.buf = append(t.buf, data...)
	q.records++
	q.bytes += len(t.buf) - start
}

// tail returns a chunk with room for need more bytes.
func (q *queue) tail(need int) *chunk {
	if n := len(q.chunks); n > 0 && !q.sealed {
		if t := q.chunks[n-1]; cap(t.buf)-len(t.buf) >= need {
			return t
		}
	}
	q.sealed = false
	var c *chunk
	if need <= chunkSize && len(q.free) > 0 {
		c = q.free[len(q.free)-1]
		q.free = q.free[:len(q.free)-1]
	} else {
		c = &chunk{buf: make([]byte, 0, max(need, chunkSize))}
	}
	if len(q.chunks) == 0 {
		q.headOff = 0
	}
	q.chunks = append(q.chunks, c)
	return c
}

// take adds to req, from the head, up to maxRecords records, as many as
// its bound holds. It returns the chunks read to the end, to release once
// req's bytes are written: req holds the records in place.
func (q *queue) take(req *otlpwire.Request, maxRecords int, done []*chunk) []*chunk {
	for q.records > 0 && req.Len() < maxRecords {
		c := q.chunks[0]
		scope, rec, next := c.record(q.headOff)
		if !req.Add(scope, rec) {
			break
		}
		q.records--
		q.bytes -= next - q.headOff
		q.headOff = next
		if q.headOff == len(c.buf) {
			done = append(done, c)
			if len(q.chunks) == 1 {
				q.sealed = true // producers would write over what req reads
			}
			q.chunks = q.chunks[1:]
			q.headOff = 0
		}
	}
	if len(q.chunks) == 0 {
		q.chunks = q.chunks[:0:0]
	}
	return done
}

// record is the record at off of c's bytes, as push wrote it, and the
// offset of the next.
func (c *chunk) record(off int) (scope int, rec []byte, next int) {
	sc, n1 := binary.Uvarint(c.buf[off:])
	length, n2 := binary.Uvarint(c.buf[off+n1:])
	start := off + n1 + n2
	next = start + int(length)
	return int(sc), c.buf[start:next:next], next
}

// each calls f with each record waiting, oldest first, until it returns
// false.
func (q *queue) each(f func(scope int, rec []byte) bool) {
	off := q.headOff
	for _, c := range q.chunks {
		for off < len(c.buf) {
			scope, rec, next := c.record(off)
			if !f(scope, rec) {
				return
			}
			off = next
		}
		off = 0
	}
}

// release gives read chunks back for reuse.
func (q *queue) release(done []*chunk) {
	for _, c := range done {
		if cap(c.buf) == chunkSize && len(q.free) < maxFreeChunks {
			c.buf = c.buf[:0]
			q.free = append(q.free, c)
		}
	}
}

// drop lets go every record waiting: they are kept elsewhere. The head
// chunk is left to the garbage collector, not reused: a request being
// built may still read it.
func (q *queue) drop() {
	if len(q.chunks) > 1 {
		q.release(q.chunks[1:])
	}
	q.chunks, q.headOff, q.sealed, q.records, q.bytes = nil, 0, false, 0, 0
}
