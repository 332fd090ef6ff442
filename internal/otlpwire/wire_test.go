package otlpwire

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// decode reads a request as a collector would.
func decode(t *testing.T, b []byte) *collogspb.ExportLogsServiceRequest {
	t.Helper()
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("not a valid request: %v", err)
	}
	return &req
}

func request(t *testing.T, res Resource, scope Scope, recs ...[]byte) *collogspb.ExportLogsServiceRequest {
	var w Request
	w.Reset(res)
	w.Scope(scope)
	for _, r := range recs {
		w.Add(r)
	}
	return decode(t, w.Bytes())
}

// Nested messages of every length class decode: a length that needs one,
// two or three varint bytes is written at the right offset.
func TestNestedLengths(t *testing.T) {
	for _, n := range []int{0, 1, 120, 127, 128, 200, 16383, 16384, 70000, 3 << 20} {
		s := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		inner := attribute.MapValue(attribute.String("s", s), attribute.Int("n", n))
		rec := AppendRecord(nil, &Record{Body: attribute.StringValue(s)},
			[]attribute.KeyValue{{Key: "m", Value: attribute.SliceValue(inner, inner)}}, DefaultLimits)
		req := request(t, NewResource(nil, ""), NewScope("s", "", "", nil), rec, rec)
		got := req.ResourceLogs[0].ScopeLogs[0].LogRecords
		if len(got) != 2 || got[1].Body.GetStringValue() != s {
			t.Fatalf("length %d: body lost", n)
		}
		arr := got[1].Attributes[0].Value.GetArrayValue().GetValues()
		if len(arr) != 2 || arr[1].GetKvlistValue().GetValues()[1].Value.GetStringValue() != s { // sorted: n, s
			t.Fatalf("length %d: nested value lost", n)
		}
	}
}

// Zero values inside a oneof are sent, as protobuf does for a set oneof;
// empty fields of a record are not.
func TestZeroValuesAndEmptyFields(t *testing.T) {
	rec := AppendRecord(nil, &Record{}, []attribute.KeyValue{
		attribute.Int("i", 0), attribute.Bool("b", false), attribute.String("s", ""), attribute.Float64("f", 0),
		{Key: "e"}, {Key: "", Value: attribute.IntValue(1)},
	}, DefaultLimits)
	got := request(t, NewResource(nil, ""), Scope{}, rec).ResourceLogs[0]
	if got.Resource != nil || got.ScopeLogs[0].Scope != nil {
		t.Error("an empty resource or scope was sent")
	}
	r := got.ScopeLogs[0].LogRecords[0]
	if r.TimeUnixNano != 0 || r.SeverityNumber != 0 || r.TraceId != nil || r.Body == nil || r.Body.Value != nil {
		t.Errorf("empty record: %v", r)
	}
	if len(r.Attributes) != 5 {
		t.Fatalf("attributes %v: want the one with an empty key left out", r.Attributes)
	}
	for _, kv := range r.Attributes[:4] {
		if kv.Value.Value == nil {
			t.Errorf("%s: the zero value was not sent", kv.Key)
		}
	}
}

// Limits: the first AttributeCount attributes kept and the rest counted;
// strings cut to ValueLength characters at any depth, the body never.
func TestLimits(t *testing.T) {
	attrs := []attribute.KeyValue{attribute.String("a", "héllo"), attribute.StringSlice("b", []string{"abcdef"}),
		{Key: "c", Value: attribute.MapValue(attribute.String("d", "abcdef"))}, attribute.Int("e", 1)}
	lim := Limits{AttributeCount: 3, ValueLength: 2}
	rec := AppendRecord(nil, &Record{Body: attribute.StringValue("long body"), Dropped: 1}, attrs, lim)
	r := request(t, NewResource(nil, ""), Scope{}, rec).ResourceLogs[0].ScopeLogs[0].LogRecords[0]
	if len(r.Attributes) != 3 || r.DroppedAttributesCount != 2 {
		t.Fatalf("kept %d, dropped %d", len(r.Attributes), r.DroppedAttributesCount)
	}
	if r.Attributes[0].Value.GetStringValue() != "hé" ||
		r.Attributes[1].Value.GetArrayValue().Values[0].GetStringValue() != "ab" ||
		r.Attributes[2].Value.GetKvlistValue().Values[0].Value.GetStringValue() != "ab" ||
		r.Body.GetStringValue() != "long body" {
		t.Errorf("cut: %v, body %v", r.Attributes, r.Body)
	}
}

// Invalid UTF-8 becomes U+FFFD when asked, so that no request is refused.
func TestCheckUTF8(t *testing.T) {
	bad := "caf\xe9"
	rec := AppendRecord(nil, &Record{Body: attribute.StringValue(bad), SeverityText: bad},
		[]attribute.KeyValue{attribute.String(bad, bad)}, Limits{AttributeCount: -1, ValueLength: -1, CheckUTF8: true})
	r := request(t, NewResource(nil, ""), Scope{}, rec).ResourceLogs[0].ScopeLogs[0].LogRecords[0]
	if r.Body.GetStringValue() != "caf\uFFFD" || r.Attributes[0].Key != "caf\uFFFD" || r.SeverityText != "caf\uFFFD" {
		t.Errorf("record %v", r)
	}
}

// Trace fields, times and severity land where the SDK puts them.
func TestRecordFields(t *testing.T) {
	tid := trace.TraceID{1, 2, 3}
	sid := trace.SpanID{4, 5}
	now := time.Unix(1700000000, 123)
	rec := AppendRecord(nil, &Record{Time: now, Observed: now.Add(time.Second), Severity: log.SeverityWarn,
		SeverityText: "warn", EventName: "ev", TraceID: tid, SpanID: sid, Flags: trace.FlagsSampled}, nil, DefaultLimits)
	r := request(t, NewResource([]attribute.KeyValue{attribute.String("service.name", "x")}, "https://s"),
		NewScope("sc", "v1", "https://u", []attribute.KeyValue{attribute.Int("a", 1)}), rec).ResourceLogs[0]
	lr := r.ScopeLogs[0].LogRecords[0]
	if lr.TimeUnixNano != uint64(now.UnixNano()) || lr.ObservedTimeUnixNano != uint64(now.Add(time.Second).UnixNano()) ||
		lr.SeverityNumber != logspb.SeverityNumber_SEVERITY_NUMBER_WARN || lr.SeverityText != "warn" || lr.EventName != "ev" ||
		string(lr.TraceId) != string(tid[:]) || string(lr.SpanId) != string(sid[:]) || lr.Flags != 1 {
		t.Errorf("record %v", lr)
	}
	if r.SchemaUrl != "https://s" || r.Resource.Attributes[0].Key != "service.name" ||
		r.ScopeLogs[0].Scope.Name != "sc" || r.ScopeLogs[0].Scope.Version != "v1" || r.ScopeLogs[0].SchemaUrl != "https://u" ||
		len(r.ScopeLogs[0].Scope.Attributes) != 1 {
		t.Errorf("resource and scope %v", r)
	}
}

// A request of several scopes, with schema URLs and records of every
// length class, is byte for byte what proto.Marshal writes for the same
// request: every length is written once, at its place.
func TestRequestMatchesMarshal(t *testing.T) {
	res := NewResource([]attribute.KeyValue{attribute.String("service.name", "train")}, "https://res")
	scopes := []Scope{NewScope("a", "1", "https://a", nil), NewScope("", "", "", nil), NewScope("c", "", "", nil)}
	var w Request
	w.Reset(res)
	var recs [][]byte
	for i, n := range []int{0, 100, 127, 128, 20000, 3 << 19} {
		w.Scope(scopes[i%len(scopes)])
		for j := range 3 {
			rec := AppendRecord(nil, &Record{Body: attribute.StringValue(strings.Repeat("x", n+j))}, nil, DefaultLimits)
			recs = append(recs, rec)
			w.Add(rec)
		}
	}
	got := w.Bytes()
	if again := w.Bytes(); string(again) != string(got) {
		t.Fatal("a second Bytes wrote another request")
	}
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(decode(t, got))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("request of %d bytes differs from proto.Marshal's %d", len(got), len(want))
	}
	if n := len(decode(t, got).ResourceLogs[0].ScopeLogs); n != 6 {
		t.Fatalf("%d scopes, want 6", n)
	}
	w.Reset(res) // reused, and a record with no scope started: the empty one
	w.Add(recs[0])
	again := decode(t, w.Bytes())
	if sl := again.ResourceLogs[0].ScopeLogs; len(sl) != 1 || sl[0].Scope != nil || len(sl[0].LogRecords) != 1 {
		t.Fatal("a reused request kept old records, or a record with no scope was lost")
	}
}
