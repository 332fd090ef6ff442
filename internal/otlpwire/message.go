package otlpwire

import "google.golang.org/protobuf/encoding/protowire"

// A nested message is written before its length is known: begin leaves one
// byte for the length, end fills it in, and only a message of 128 bytes or
// more moves its content to make room for a longer varint. Most attribute
// values are short, so most messages are written once, in place.

// begin appends the tag of a length-delimited field num and a one-byte
// placeholder for its length, and returns where the content starts.
func begin(b []byte, num protowire.Number) ([]byte, int) {
	b = appendTag(b, num, protowire.BytesType)
	b = append(b, 0)
	return b, len(b)
}

// end writes the length of the message whose content starts at start.
func end(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0x80 {
		b[start-1] = byte(n)
		return b
	}
	extra := protowire.SizeVarint(uint64(n)) - 1
	for range extra {
		b = append(b, 0)
	}
	copy(b[start+extra:], b[start:start+n])
	appendVarint(b[:start-1], uint64(n))
	return b
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = appendTag(b, num, protowire.BytesType)
	return appendLenString(b, s)
}

// appendStringField appends s unless it is empty, as proto3 does for a
// plain string field.
func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(b, num, s)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.VarintType)
	return appendVarint(b, v)
}

func appendFixed64Field(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = appendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// FieldSize is how many bytes a length-delimited field of n content bytes
// takes with a one-byte tag, as records take in a request.
func FieldSize(n int) int { return 1 + protowire.SizeBytes(n) }

// The protowire appenders, with the one-byte varint inline: nearly every
// tag and length the encoder writes is under 128, and a call per byte was
// a good part of a record's cost.

func appendVarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

// appendTag is one byte: every field this package writes has a number
// below 16 (TestTagsAreOneByte), so that, inlined with a constant number,
// a tag is one append.
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return append(b, byte(num)<<3|byte(typ&7))
}

func appendLenString(b []byte, s string) []byte {
	return append(appendVarint(b, uint64(len(s))), s...)
}

func appendLenBytes(b []byte, v []byte) []byte {
	return append(appendVarint(b, uint64(len(v))), v...)
}
