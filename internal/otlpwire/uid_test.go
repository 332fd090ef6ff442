package otlpwire

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/proto"
)

// A UID is written as a ULID: 26 characters of Crockford's base32, the
// first holding the top 3 bits.
func TestUIDText(t *testing.T) {
	for _, tt := range []struct {
		u    UID
		want string
	}{
		{UID{}, "00000000000000000000000000"},
		{UID{^uint64(0), ^uint64(0)}, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{UID{0, 31}, "0000000000000000000000000Z"},
		{UID{0, 32}, "00000000000000000000000010"},
		// The spec's example, 01ARZ3NDEKTSV4RRFFQ69G5FAV, as 128 bits.
		{UID{0x01563e3ab5d3d676, 0x4c61efb99302bd5b}, "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
	} {
		if got := string(tt.u.AppendText(nil)); got != tt.want {
			t.Errorf("%x: %s, want %s", tt.u, got, tt.want)
		}
	}
}

// A record with a UID is the record without it plus log.record.uid, last,
// outside the count limit.
func TestRecordUID(t *testing.T) {
	now := time.Unix(1700000000, 0)
	attrs := []attribute.KeyValue{attribute.String("a", "x"), attribute.Int("b", 2)}
	lim := DefaultLimits
	lim.AttributeCount = 2
	r := Record{Time: now, Body: attribute.StringValue("m")}
	plain := AppendRecord(nil, &r, attrs, lim)
	without := request(t, NewResource(nil, ""), NewScope("s", "", "", nil), plain)
	r.UID = UID{1, 2}
	withUID := AppendRecord(nil, &r, attrs, lim)
	with := request(t, NewResource(nil, ""), NewScope("s", "", "", nil), withUID)
	// docs/delivery.md: what the id costs each record on the wire.
	if n := len(withUID) - len(plain); n != 48 {
		t.Errorf("the id adds %d bytes, want 48", n)
	}
	lr := with.ResourceLogs[0].ScopeLogs[0].LogRecords[0]
	last := lr.Attributes[len(lr.Attributes)-1]
	if last.Key != KeyRecordUID || last.Value.GetStringValue() != string(r.UID.AppendText(nil)) {
		t.Fatalf("last attribute %v", last)
	}
	lr.Attributes = lr.Attributes[:len(lr.Attributes)-1]
	if !proto.Equal(with, without) {
		t.Errorf("with the uid removed:\n%v\nwant\n%v", with, without)
	}
}
