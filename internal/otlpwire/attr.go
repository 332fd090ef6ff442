package otlpwire

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/encoding/protowire"
)

// One record attribute at a time, for a writer that has typed values and
// no attribute.KeyValue: each appends a whole LogRecord.attributes field,
// tag included, the bytes appendKeyValue writes for the same attribute.
// The sizes of the scalar ones are known ahead, so they are written once,
// with no length to fill in afterwards. An empty key is the caller's to
// leave out.

// The scalar writers take the limits by pointer: they are called once per
// attribute, and a Limits is too wide to pass in registers.

// AppendStringAttr appends an attribute with a string value.
func AppendStringAttr(b []byte, key, v string, lim *Limits) []byte {
	key, redact := lim.attrKey(key)
	if redact {
		v = Redacted
	}
	v = Truncate(lim.ValueLength, lim.valid(v))
	value := 1 + protowire.SizeBytes(len(v))
	b = appendAttrHead(b, key, value)
	b = appendTag(b, anyString, protowire.BytesType)
	return appendLenString(b, v)
}

// AppendTextAttr appends an attribute whose string value is the text v,
// made valid UTF-8 whatever the limits say, and cut to their length: for
// text a caller formats into a buffer of its own (a time, a number), which
// need not become a string on the way.
func AppendTextAttr(b []byte, key string, v []byte, lim *Limits) []byte {
	if !utf8.Valid(v) {
		return AppendStringAttr(b, key, strings.ToValidUTF8(string(v), "\uFFFD"), lim)
	}
	key, redact := lim.attrKey(key)
	if redact {
		return AppendStringAttr(b, key, Redacted, lim)
	}
	v = truncateText(lim.ValueLength, v)
	b = appendAttrHead(b, key, 1+protowire.SizeBytes(len(v)))
	b = appendTag(b, anyString, protowire.BytesType)
	return appendLenBytes(b, v)
}

// truncateText is Truncate for valid UTF-8 text in bytes.
func truncateText(limit int, v []byte) []byte {
	if limit < 0 || len(v) <= limit {
		return v
	}
	for i, n := 0, 0; i < len(v); n++ {
		if n == limit {
			return v[:i]
		}
		_, size := utf8.DecodeRune(v[i:])
		i += size
	}
	return v
}

// AppendBytesAttr appends an attribute with a byte-slice value.
func AppendBytesAttr(b []byte, key string, v []byte, lim *Limits) []byte {
	key, redact := lim.attrKey(key)
	if redact {
		return AppendStringAttr(b, key, Redacted, lim)
	}
	if lim.ValueLength >= 0 && len(v) > lim.ValueLength {
		v = v[:lim.ValueLength]
	}
	b = appendAttrHead(b, key, 1+protowire.SizeBytes(len(v)))
	b = appendTag(b, anyBytes, protowire.BytesType)
	return appendLenBytes(b, v)
}

// AppendIntAttr appends an attribute with an integer value.
func AppendIntAttr(b []byte, key string, v int64, lim *Limits) []byte {
	key, redact := lim.attrKey(key)
	if redact {
		return AppendStringAttr(b, key, Redacted, lim)
	}
	b = appendAttrHead(b, key, 1+protowire.SizeVarint(uint64(v)))
	b = appendTag(b, anyInt, protowire.VarintType)
	return appendVarint(b, uint64(v))
}

// AppendFloatAttr appends an attribute with a double value.
func AppendFloatAttr(b []byte, key string, v float64, lim *Limits) []byte {
	key, redact := lim.attrKey(key)
	if redact {
		return AppendStringAttr(b, key, Redacted, lim)
	}
	b = appendAttrHead(b, key, 1+8)
	b = appendTag(b, anyDouble, protowire.Fixed64Type)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// AppendBoolAttr appends an attribute with a boolean value.
func AppendBoolAttr(b []byte, key string, v bool, lim *Limits) []byte {
	key, redact := lim.attrKey(key)
	if redact {
		return AppendStringAttr(b, key, Redacted, lim)
	}
	b = appendAttrHead(b, key, 1+1)
	b = appendTag(b, anyBool, protowire.VarintType)
	return appendVarint(b, protowire.EncodeBool(v))
}

// attrKey is an attribute's key, made valid if the limits ask, and whether
// its value is to be redacted: without a redactor, one test of a pointer.
func (lim *Limits) attrKey(key string) (string, bool) {
	if !lim.CheckUTF8 && lim.Redact == nil {
		return key, false // the direct way's keys, made valid already: inlined
	}
	key = lim.valid(key)
	return key, lim.Redact != nil && lim.Redact.Match(key)
}

// valid is s made valid UTF-8 if the limits ask.
func (lim *Limits) valid(s string) string {
	if !lim.CheckUTF8 {
		return s
	}
	return ValidString(s)
}

// AppendMapAttr appends an attribute whose value is a map of kvs: the bytes
// AppendAttr writes for attribute.MapValue(kvs...), once kvs are sorted by
// key as MapValue sorts them. A writer that has the entries at hand need
// not build the value, which costs an allocation, and another to read.
func AppendMapAttr(b []byte, key string, kvs []attribute.KeyValue, lim Limits) []byte {
	return appendEntriesAttr(b, key, kvs, false, lim)
}

// AppendSliceAttr appends an attribute whose value is a slice of the
// values of elems (their keys unused): the bytes AppendAttr writes for
// attribute.SliceValue of those values, without building it.
func AppendSliceAttr(b []byte, key string, elems []attribute.KeyValue, lim Limits) []byte {
	return appendEntriesAttr(b, key, elems, true, lim)
}

// appendEntriesAttr is AppendSliceAttr if slice, else AppendMapAttr.
func appendEntriesAttr(b []byte, key string, kvs []attribute.KeyValue, slice bool, lim Limits) []byte {
	e := encoder{Limits: lim}
	key, redact := lim.attrKey(key)
	if redact {
		return AppendStringAttr(b, key, Redacted, &lim)
	}
	b, start := begin(b, recAttributes)
	b = appendStringField(b, kvKey, key)
	b, value := begin(b, kvValue)
	if slice {
		var array int
		b, array = begin(b, anyArray)
		b = appendElems(e, b, kvs, func(kv attribute.KeyValue) attribute.Value { return kv.Value }, maxDepth-1)
		b = end(b, array)
	} else {
		b = e.appendMap(b, kvs, maxDepth-1)
	}
	return end(end(b, value), start)
}

// AppendAttr appends an attribute of any value, under the depth limit
// AppendRecord applies.
func AppendAttr(b []byte, kv attribute.KeyValue, lim Limits) []byte {
	return encoder{Limits: lim}.appendKeyValue(b, recAttributes, kv, attrDepth(kv.Value))
}

// The tags of LogRecord.attributes, KeyValue.key and KeyValue.value, all
// length-delimited.
const (
	attrTag  = recAttributes<<3 | byte(protowire.BytesType)
	keyTag   = kvKey<<3 | byte(protowire.BytesType)
	valueTag = kvValue<<3 | byte(protowire.BytesType)
)

// appendAttrHead appends the attribute's tag and length, its key, and the
// tag and length of an AnyValue of value bytes, which the caller appends.
func appendAttrHead(b []byte, key string, value int) []byte {
	if kv := 2 + len(key) + 2 + value; kv < 0x80 && key != "" {
		// Every length fits in one byte: the common short attribute.
		b = append(b, attrTag, byte(kv), keyTag, byte(len(key)))
		b = append(b, key...)
		return append(b, valueTag, byte(value))
	}
	kv := 1 + protowire.SizeVarint(uint64(value)) + value
	if key != "" {
		kv += 1 + protowire.SizeBytes(len(key))
	}
	b = appendTag(b, recAttributes, protowire.BytesType)
	b = appendVarint(b, uint64(kv))
	if key != "" {
		b = appendTag(b, kvKey, protowire.BytesType)
		b = appendLenString(b, key)
	}
	b = appendTag(b, kvValue, protowire.BytesType)
	return appendVarint(b, uint64(value))
}
