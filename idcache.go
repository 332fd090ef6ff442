package zaplens

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

// idCache keeps one format's rendering of the last span it saw. A rank logs
// thousands of lines inside one span, so rendering once per span makes
// those lines cost no allocation. It is shared by the tees built with the
// format and their With copies.
type idCache struct {
	decimal bool   // Datadog's form; else lowercase hex
	prefix  string // before a hex trace id
	last    atomic.Pointer[renderedIDs]
}

// renderedIDs is one span's ids as a format writes them; trace and span
// share one allocation.
type renderedIDs struct {
	traceID     trace.TraceID
	spanID      trace.SpanID
	trace, span string
}

func hexCache(prefix string) *idCache { return &idCache{prefix: prefix} }

func decimalCache() *idCache { return &idCache{decimal: true} }

// get returns sc's ids, rendering them only when sc is not the last span.
func (c *idCache) get(sc trace.SpanContext) *renderedIDs {
	tid, sid := sc.TraceID(), sc.SpanID()
	if r := c.last.Load(); r != nil && r.traceID == tid && r.spanID == sid {
		return r
	}
	var buf [96]byte // room for any rendering but a long project name's
	out, at := c.render(buf[:0], tid, sid)
	s := string(out)
	r := &renderedIDs{traceID: tid, spanID: sid, trace: s[:at], span: s[at:]}
	c.last.Store(r)
	return r
}

// render appends both ids to dst and reports where the span id starts.
func (c *idCache) render(dst []byte, tid trace.TraceID, sid trace.SpanID) ([]byte, int) {
	if c.decimal {
		return appendDecimal(dst, tid, sid)
	}
	dst = append(dst, c.prefix...)
	dst = hex.AppendEncode(dst, tid[:])
	at := len(dst)
	return hex.AppendEncode(dst, sid[:]), at
}

// appendDecimal renders the lower 64 bits of each id, read big-endian as
// the W3C ids are written, as an unsigned decimal: Datadog's 64-bit ids.
func appendDecimal(dst []byte, tid trace.TraceID, sid trace.SpanID) ([]byte, int) {
	dst = strconv.AppendUint(dst, binary.BigEndian.Uint64(tid[8:]), 10)
	at := len(dst)
	return strconv.AppendUint(dst, binary.BigEndian.Uint64(sid[:]), 10), at
}
