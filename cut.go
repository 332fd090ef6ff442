package zaplens

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// keyCut marks a record whose longest values were cut to fit a request.
const keyCut = "zaplens.cut"

// cutRecord encodes rec again with every string value, the body included,
// cut to the longest length that lets the record fit in max bytes, and
// marks it with zaplens.cut; if even empty values do not fit, it keeps as
// many attributes as fit. One oversized value costs its own tail, never the
// record, nor the request it goes in.
func cutRecord(buf []byte, rec *otlpwire.Record, attrs []attribute.KeyValue, lim otlpwire.Limits, max int) []byte {
	attrs = append(attrs, attribute.Bool(keyCut, true))
	body := rec.Body
	encode := func(valueLen, count int) []byte {
		l := lim
		l.ValueLength, l.AttributeCount = valueLen, count
		r := *rec
		if body.Type() == attribute.STRING {
			r.Body = attribute.StringValue(otlpwire.Truncate(valueLen, body.AsString()))
		}
		return otlpwire.AppendRecord(buf[:0], &r, attrs, l)
	}
	count := lim.AttributeCount
	if count < 0 || count > len(attrs) {
		count = len(attrs)
	}
	if len(encode(0, count)) > max {
		count = largest(0, count, func(n int) bool { return len(encode(0, n)) <= max })
		return encode(0, count)
	}
	n := largest(0, len(buf), func(n int) bool { return len(encode(n, count)) <= max })
	return encode(n, count)
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
