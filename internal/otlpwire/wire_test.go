package otlpwire

import (
	"math"
	"strconv"
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
	w.Reset(res, []Scope{scope}, math.MaxInt)
	for _, r := range recs {
		w.Add(0, r)
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
	a, c := NewScope("a", "1", "https://a", nil), NewScope("c", "", "", nil)
	var w Request
	w.Reset(res, []Scope{a, {}, c, a, {}, c}, math.MaxInt) // a scope under two numbers: two ScopeLogs
	var recs [][]byte
	for i, n := range []int{0, 100, 127, 128, 20000, 3 << 19} {
		for j := range 3 {
			rec := AppendRecord(nil, &Record{Body: attribute.StringValue(strings.Repeat("x", n+j))}, nil, DefaultLimits)
			recs = append(recs, rec)
			w.Add(i, rec)
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
	w.Reset(res, []Scope{{}}, math.MaxInt) // reused
	w.Add(0, recs[0])
	again := decode(t, w.Bytes())
	if sl := again.ResourceLogs[0].ScopeLogs; len(sl) != 1 || sl[0].Scope != nil || len(sl[0].LogRecords) != 1 {
		t.Fatal("a reused request kept old records or scopes")
	}
}

// Records of scopes in any order are written grouped: the scopes in the
// order each first came, each scope's records in the order they came. A
// reused request groups each batch afresh, and allocates nothing.
func TestRequestGroupsByScope(t *testing.T) {
	res := NewResource(nil, "")
	scopes := []Scope{NewScope("a", "", "", nil), NewScope("b", "", "", nil), NewScope("c", "", "", nil)}
	var recs [][]byte
	for i := range 6 {
		recs = append(recs, AppendRecord(nil, &Record{Body: attribute.StringValue(strconv.Itoa(i))}, nil, DefaultLimits))
	}
	var w Request
	build := func(numbers []int) []byte {
		w.Reset(res, scopes, math.MaxInt)
		for i, k := range numbers {
			w.Add(k, recs[i])
		}
		return w.Bytes()
	}
	for _, tc := range []struct {
		numbers []int
		want    string
	}{
		{[]int{2, 0, 2, 1, 0}, "c0 c2 a1 a4 b3"},
		{[]int{1, 1, 0, 2, 0}, "b0 b1 a2 a4 c3"},
		{[]int{0, 1, 0, 2, 1, 2}, "a0 a2 b1 b4 c3 c5"},
		{[]int{0, 0, 1, 1, 2}, "a0 a1 b2 b3 c4"},
		{[]int{0, 0}, "a0 a1"},
	} {
		body := build(tc.numbers)
		if again := w.Bytes(); string(again) != string(body) {
			t.Errorf("%v: a second Bytes wrote another request", tc.numbers)
		}
		var got []string
		for _, sl := range decode(t, body).ResourceLogs[0].ScopeLogs {
			for _, lr := range sl.LogRecords {
				got = append(got, sl.Scope.GetName()+lr.Body.GetStringValue())
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%v: got %s, want %s", tc.numbers, g, tc.want)
		}
	}
	if n := testing.AllocsPerRun(10, func() { build([]int{2, 0, 2, 1, 0}) }); n != 0 {
		t.Errorf("a reused request allocates %v times a batch", n)
	}
}

// Add keeps a request under its bound, charging a scope's own bytes with
// its first record alone, and always takes a request's first record.
func TestAddKeepsRequestUnderBound(t *testing.T) {
	res := NewResource([]attribute.KeyValue{attribute.String("service.name", "train")}, "https://res")
	big := NewScope("a", "1", "https://a", []attribute.KeyValue{attribute.String("k", strings.Repeat("v", 300))})
	scopes := []Scope{big, {}, NewScope("c", "", "", nil)}
	numbers := []int{0, 2, 0, 1, 2, 0}
	var recs [][]byte
	exact, seen := Overhead(res), map[int]bool{}
	for i, k := range numbers {
		rec := AppendRecord(nil, &Record{Body: attribute.StringValue(strings.Repeat("x", 100*i))}, nil, DefaultLimits)
		recs = append(recs, rec)
		exact += FieldSize(len(rec))
		if !seen[k] {
			exact += scopeOverhead(scopes[k])
			seen[k] = true
		}
	}
	var w Request
	for _, bound := range []int{exact, exact - 1} {
		w.Reset(res, scopes, bound)
		for i, k := range numbers {
			if !w.Add(k, recs[i]) {
				break
			}
			if n := len(w.Bytes()); n > bound {
				t.Errorf("bound %d, after record %d: %d bytes", bound, i, n)
			}
		}
		want := len(numbers)
		if bound < exact {
			want-- // the last, of a scope already in, costs its field alone
		}
		if w.Len() != want {
			t.Errorf("bound %d (exact %d): took %d records, want %d", bound, exact, w.Len(), want)
		}
	}
	w.Reset(res, scopes, 1)
	if !w.Add(0, recs[5]) || w.Add(0, recs[0]) || w.Len() != 1 {
		t.Errorf("a bound of 1 byte: took %d records, want the first alone", w.Len())
	}
}

// Every length next to the edge of a one-byte varint is written right, in
// a nested message and in a typed writer's head: the request decodes to
// the values given and is what proto.Marshal writes for them, and the
// typed writer writes what AppendAttr writes.
func TestLengthsAroundOneByte(t *testing.T) {
	lim := DefaultLimits
	for n := 100; n <= 140; n++ {
		s := strings.Repeat("v", n)
		attrs := []attribute.KeyValue{attribute.String("k", s), attribute.Map("m", attribute.String("k", s))}
		rec := AppendRecord(nil, &Record{Body: attribute.MapValue(attrs...)}, attrs, lim)
		var w Request
		w.Reset(NewResource(nil, ""), []Scope{{}}, math.MaxInt)
		w.Add(0, rec)
		got := w.Bytes()
		req := decode(t, got)
		lr := req.ResourceLogs[0].ScopeLogs[0].LogRecords[0]
		if lr.Attributes[0].Value.GetStringValue() != s ||
			lr.Attributes[1].Value.GetKvlistValue().GetValues()[0].Value.GetStringValue() != s ||
			lr.Body.GetKvlistValue().GetValues()[0].Value.GetStringValue() != s {
			t.Fatalf("length %d: a value lost: %v", n, lr)
		}
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("length %d: request differs from proto.Marshal's", n)
		}
		if typed, want := AppendStringAttr(nil, "k", s, &lim), AppendAttr(nil, attrs[0], lim); string(typed) != string(want) {
			t.Errorf("length %d:\n got %x\nwant %x", n, typed, want)
		}
	}
}

// Overhead is at least what a request spends around its records, for
// resources and scopes with and without attributes and schema URLs and
// records of every length class: a batch cut to a bound stays under it,
// and a collector does not refuse it for its size.
func TestOverheadBoundsRequest(t *testing.T) {
	long := strings.Repeat("u", 300)
	attrs := []attribute.KeyValue{attribute.String("service.name", long)}
	resources := []Resource{NewResource(nil, ""), NewResource(nil, long), NewResource(attrs, ""), NewResource(attrs, long)}
	scopes := []Scope{{}, NewScope("", "", long, nil), NewScope("a", "1", "", attrs), NewScope("a", "", "https://a", attrs)}
	sets := [][]Scope{scopes}
	for _, s := range scopes {
		sets = append(sets, []Scope{s})
	}
	var w Request
	for _, n := range []int{0, 100, 20000, 3 << 20} {
		rec := AppendRecord(nil, &Record{Body: attribute.StringValue(strings.Repeat("x", n))}, nil, DefaultLimits)
		for _, res := range resources {
			for _, set := range sets {
				w.Reset(res, set, math.MaxInt)
				records := 0
				for k := range set {
					w.Add(k, rec)
					records += FieldSize(len(rec))
				}
				if spent, bound := len(w.Bytes())-records, Overhead(res, set...); spent > bound {
					t.Errorf("records of %d bytes, %d scopes: %d bytes around them, Overhead %d", n, len(set), spent, bound)
				}
			}
		}
	}
}
