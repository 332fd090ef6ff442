package otlpwire

import (
	"math"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of common.v1 AnyValue, KeyValue, ArrayValue and KeyValueList.
const (
	anyString = 1
	anyBool   = 2
	anyInt    = 3
	anyDouble = 4
	anyArray  = 5
	anyKVList = 6
	anyBytes  = 7

	kvKey   = 1
	kvValue = 2

	listValues = 1 // ArrayValue.values and KeyValueList.values
)

// Limits are the limits the OpenTelemetry SDK applies to a record's
// attributes, applied here the same way, so that a record says what the
// SDK's pipeline would have said.
type Limits struct {
	// AttributeCount is the most attributes a record keeps, the first ones;
	// the rest are counted as dropped. Negative: no limit.
	AttributeCount int
	// ValueLength is the longest string kept, in characters, and the longest
	// byte slice, in bytes, at any depth. Negative: no limit.
	ValueLength int
	// CheckUTF8 replaces invalid UTF-8 in keys and strings with U+FFFD, as
	// the bridge does for what it converts; a collector refuses a whole
	// request for one invalid string.
	CheckUTF8 bool
	// UniqueMaps keeps the last of a repeated key in maps, at any depth,
	// for values nobody made unique before (records other code emits, a
	// scope's attributes). A map's keys are sorted, stably: repeats are
	// neighbours.
	UniqueMaps bool
	// Redact, when set, sends the value of every attribute whose key it
	// matches, at any depth, maps in a body included, as [Redacted]:
	// after the limits, as the SDK's processors see a record.
	Redact *Redactor
}

// DefaultLimits are the SDK's defaults.
var DefaultLimits = Limits{AttributeCount: 128, ValueLength: -1}

// maxDepth is the SDK's default depth limit: a slice or map nested deeper
// than this many levels below an attribute becomes an empty value.
const maxDepth = 64

// encoder carries the limits through the recursion.
type encoder struct {
	Limits
}

// str is a string value: valid, if asked, and within the length limit.
func (e encoder) str(s string) string { return Truncate(e.ValueLength, e.valid(s)) }

// ValidString is s with each invalid UTF-8 sequence replaced by U+FFFD, as
// a protobuf string must be; a valid s, nearly every one, is returned as
// it is, after one scan.
func ValidString(s string) string {
	if isASCII(s) {
		return s
	}
	return validUTF8(s)
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// isASCII reads s eight bytes at a time: keys and short values, nearly
// all of them ASCII, are most of what a record's strings are, and a byte
// loop was a good part of their cost.
func isASCII(s string) bool {
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	var or byte
	for i := 0; i < len(s); i++ {
		or |= s[i]
	}
	return or < utf8.RuneSelf
}

// Truncate keeps the first limit characters of s, as the SDK does; a
// negative limit keeps all.
func Truncate(limit int, s string) string {
	if limit < 0 || len(s) <= limit {
		return s
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i]
		}
		n++
	}
	return s
}

// appendKeyValue appends a KeyValue message, tag included, as field num.
func (e encoder) appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue, depth int) []byte {
	b, start := begin(b, num)
	key := e.valid(string(kv.Key))
	b = appendStringField(b, kvKey, key)
	v := kv.Value
	if e.Redact != nil && e.Redact.Match(key) {
		v = redactedValue
	}
	b = e.appendValue(b, kvValue, v, depth)
	return end(b, start)
}

// appendValue appends an AnyValue message, tag included, as field num.
// depth is how many more levels of slices and maps may follow; at zero
// one becomes an empty value, as the SDK's depth limit makes it. Negative:
// no limit.
func (e encoder) appendValue(b []byte, num protowire.Number, v attribute.Value, depth int) []byte {
	b, start := begin(b, num)
	if depth == 0 && isComposite(v.Type()) {
		return end(b, start)
	}
	switch v.Type() {
	case attribute.BOOL:
		b = appendTag(b, anyBool, protowire.VarintType)
		b = appendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = appendTag(b, anyInt, protowire.VarintType)
		b = appendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = appendTag(b, anyDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = appendString(b, anyString, e.str(v.AsString()))
	case attribute.BYTESLICE:
		s := v.AsString() // the bytes, without a copy
		if e.ValueLength >= 0 && len(s) > e.ValueLength {
			s = s[:e.ValueLength]
		}
		b = appendString(b, anyBytes, s)
	case attribute.MAP:
		b = e.appendMap(b, v.AsMap(), depth-1)
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE,
		attribute.STRINGSLICE, attribute.SLICE:
		b = e.appendArray(b, v, depth-1)
	case attribute.EMPTY:
	default:
		b = appendString(b, anyString, "INVALID")
	}
	return end(b, start)
}

func isComposite(t attribute.Type) bool {
	switch t {
	case attribute.MAP, attribute.SLICE, attribute.BOOLSLICE, attribute.INT64SLICE,
		attribute.FLOAT64SLICE, attribute.STRINGSLICE, attribute.BYTESLICE:
		return true
	}
	return false
}

func (e encoder) appendMap(b []byte, kvs []attribute.KeyValue, depth int) []byte {
	b, start := begin(b, anyKVList)
	for i, kv := range kvs {
		if e.UniqueMaps && i+1 < len(kvs) && kvs[i+1].Key == kv.Key {
			continue // the SDK keeps the last
		}
		b = e.appendKeyValue(b, listValues, kv, depth)
	}
	return end(b, start)
}

// appendArray writes every slice kind as an ArrayValue of AnyValues.
func (e encoder) appendArray(b []byte, v attribute.Value, depth int) []byte {
	b, start := begin(b, anyArray)
	switch v.Type() {
	case attribute.BOOLSLICE:
		b = appendElems(e, b, v.AsBoolSlice(), attribute.BoolValue, depth)
	case attribute.INT64SLICE:
		b = appendElems(e, b, v.AsInt64Slice(), attribute.Int64Value, depth)
	case attribute.FLOAT64SLICE:
		b = appendElems(e, b, v.AsFloat64Slice(), attribute.Float64Value, depth)
	case attribute.STRINGSLICE:
		b = appendElems(e, b, v.AsStringSlice(), attribute.StringValue, depth)
	case attribute.SLICE:
		b = appendElems(e, b, v.AsSlice(), func(x attribute.Value) attribute.Value { return x }, depth)
	}
	return end(b, start)
}

// appendElems appends each element of a typed slice as an AnyValue.
func appendElems[T any](e encoder, b []byte, xs []T, value func(T) attribute.Value, depth int) []byte {
	for _, x := range xs {
		b = e.appendValue(b, listValues, value(x), depth)
	}
	return b
}
