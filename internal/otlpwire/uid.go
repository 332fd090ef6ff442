package otlpwire

import "google.golang.org/protobuf/encoding/protowire"

// KeyRecordUID is the semantic conventions' attribute for a record's unique
// id: records that share one are duplicates, which a backend may drop.
const KeyRecordUID = "log.record.uid"

// UID is a record's unique id, 128 bits sent as a ULID: 26 characters of
// Crockford's base32. The zero UID is none.
type UID struct{ Hi, Lo uint64 }

// ulidLen is the length of a ULID's text.
const ulidLen = 26

// crockford is the alphabet of ULIDs.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// AppendText appends u as a ULID: 26 digits of 5 bits, the first of 3.
func (u UID) AppendText(b []byte) []byte {
	var d [ulidLen]byte
	hi, lo := u.Hi, u.Lo
	for i := ulidLen - 1; i >= 0; i-- {
		d[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return append(b, d[:]...)
}

// appendUID appends the log.record.uid attribute of u.
func appendUID(b []byte, u UID) []byte {
	b = appendAttrHead(b, KeyRecordUID, 1+protowire.SizeBytes(ulidLen))
	b = appendTag(b, anyString, protowire.BytesType)
	b = append(b, ulidLen)
	return u.AppendText(b)
}
