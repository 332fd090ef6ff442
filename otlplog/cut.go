package otlplog

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// keyCut marks a record whose longest values were cut to fit a request.
const keyCut = "zaplens.cut"

// cutRecord encodes rec again with every string value, the body included,
// cut to the longest length that lets the record fit in size bytes, and
// marks it with zaplens.cut; if even empty values do not fit, it keeps as
// many attributes as fit. One oversized value costs its own tail, never the
// record, nor the request it goes in.
//
// The marker always takes the last slot the count limit leaves, so that a
// reader can tell a cut record from a whole one however many attributes it
// had: the attribute it displaces is counted as dropped, as the limit counts
// any other. A limit of zero keeps no attribute, the marker neither.
func cutRecord(buf []byte, rec *otlpwire.Record, attrs []attribute.KeyValue, lim otlpwire.Limits, size int) []byte {
	attrs = withKeys(attrs)
	slots := len(attrs) + 1
	if lim.AttributeCount >= 0 {
		slots = min(slots, lim.AttributeCount)
	}
	kept := make([]attribute.KeyValue, 0, slots)
	body := rec.Body
	encode := func(valueLen, slots int) []byte {
		l := lim
		l.ValueLength, l.AttributeCount = valueLen, -1
		r := *rec
		if body.Type() == attribute.STRING {
			r.Body = attribute.StringValue(otlpwire.Truncate(valueLen, body.AsString()))
		}
		kept = markedPrefix(kept[:0], attrs, slots)
		r.Dropped += len(attrs) - max(slots-1, 0)
		return otlpwire.AppendRecord(buf[:0], &r, kept, l)
	}
	if len(encode(0, slots)) > size {
		slots = largest(0, slots, func(n int) bool { return len(encode(0, n)) <= size })
		return encode(0, slots)
	}
	n := largest(0, len(buf), func(n int) bool { return len(encode(n, slots)) <= size })
	return encode(n, slots)
}

// markedPrefix appends to dst the first slots-1 of attrs and the cut
// marker, or nothing when slots is 0.
func markedPrefix(dst, attrs []attribute.KeyValue, slots int) []attribute.KeyValue {
	if slots == 0 {
		return dst
	}
	dst = append(dst, attrs[:slots-1]...)
	return append(dst, attribute.Bool(keyCut, true))
}

// withKeys is attrs without those of an empty key, which the encoder skips
// without counting them dropped, so that the count of those the marker
// displaces is right.
func withKeys(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, kv := range attrs {
		if kv.Key != "" {
			out = append(out, kv)
		}
	}
	return out
}

// largest is the largest n in [lo, hi] for which fits holds, fits being
// true at lo and turning false at most once as n grows.
func largest(lo, hi int, fits func(int) bool) int {
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
