package otlpview

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

var (
	traceID = []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	spanID  = []byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	t0      = time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.UTC)
)

func str(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

func logsRequest(body string, attrs ...*commonpb.KeyValue) *collogspb.ExportLogsServiceRequest {
	return &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("svc"))}},
		ScopeLogs: []*logspb.ScopeLogs{{
			Scope: &commonpb.InstrumentationScope{Name: "trainer.optim"},
			LogRecords: []*logspb.LogRecord{{
				TimeUnixNano:   uint64(t0.UnixNano()),
				SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO,
				SeverityText:   "info",
				Body:           str(body),
				Attributes:     attrs,
				TraceId:        traceID,
				SpanId:         spanID,
			}},
		}},
	}}}
}

// TestHTTP: OTLP/HTTP requests, good and bad, against a served receiver.
func TestHTTP(t *testing.T) {
	r := &Receiver{}
	srv, err := Listen(r, "", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if srv.GRPCAddr() != "" {
		t.Errorf("gRPC served although its address was empty: %s", srv.GRPCAddr())
	}
	base := "http://" + srv.HTTPAddr()

	logs, _ := proto.Marshal(logsRequest("hello"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(logs)
	_ = zw.Close()
	traces, _ := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{TraceId: traceID, SpanId: spanID, Name: "step"}}}},
	}}})

	for _, c := range []struct {
		name, method, path, ctype, encoding string
		body                                []byte
		code                                int
	}{
		{"logs", "POST", "/v1/logs", "application/x-protobuf", "", logs, 200},
		{"logs gzip", "POST", "/v1/logs", "application/x-protobuf", "gzip", gz.Bytes(), 200},
		{"traces", "POST", "/v1/traces", "application/x-protobuf; charset=binary", "", traces, 200},
		{"json", "POST", "/v1/logs", "application/json", "", []byte(`{}`), 415},
		{"no content type", "POST", "/v1/logs", "", "", logs, 415},
		{"brotli", "POST", "/v1/logs", "application/x-protobuf", "br", logs, 415},
		{"not gzip", "POST", "/v1/logs", "application/x-protobuf", "gzip", logs, 400},
		{"not protobuf", "POST", "/v1/logs", "application/x-protobuf", "", []byte{0xff, 0xff, 0xff}, 400},
		{"GET", "GET", "/v1/logs", "", "", nil, 405},
		{"metrics", "POST", "/v1/metrics", "application/x-protobuf", "", nil, 404},
	} {
		req, _ := http.NewRequestWithContext(context.Background(), c.method, base+c.path, bytes.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		if c.encoding != "" {
			req.Header.Set("Content-Encoding", c.encoding)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s: HTTP %d, want %d: %q", c.name, resp.StatusCode, c.code, data)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			t.Errorf("%s: answer's Content-Type %q", c.name, ct)
		}
		var m proto.Message = &spb.Status{}
		if c.code == 200 {
			m = &collogspb.ExportLogsServiceResponse{}
		}
		if err := proto.Unmarshal(data, m); err != nil {
			t.Errorf("%s: answer is not a %T: %v", c.name, m, err)
		} else if st, ok := m.(*spb.Status); ok && st.GetMessage() == "" {
			t.Errorf("%s: error answer without a message", c.name)
		}
	}
	if nl, ns := r.Counts(); nl != 2 || ns != 1 {
		t.Errorf("received %d log records and %d spans, want 2 and 1", nl, ns)
	}
	l := r.Logs()[1]
	if l.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || l.SpanID != "00f067aa0ba902b7" || l.Service != "svc" || l.Scope != "trainer.optim" || !l.Time.Equal(t0) {
		t.Errorf("record kept as %+v", l)
	}
	if s := r.Spans(); len(s) != 1 || s[0].Name != "step" || s[0].ParentID != "" {
		t.Errorf("spans kept: %+v", s)
	}
}

// TestLine: one line per record whatever its values; ids only when set.
func TestLine(t *testing.T) {
	var got []string
	r := &Receiver{OnLog: func(l Log) { got = append(got, l.Line()) }}
	req := logsRequest("two\nlines",
		kv("path", str("/a b")),
		kv("n", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 7}}),
		kv("lr", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.00031234567}}),
		kv("empty", str("")),
		kv("exception.stacktrace", str("main.f()\n\tmain.go:1\nmain.main()\n\tmain.go:2\n")),
		kv("obj", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
			Values: []*commonpb.KeyValue{kv("k", str("v=1"))},
		}}}),
	)
	r.ExportLogs(req)
	req = logsRequest("plain body")
	lr := req.ResourceLogs[0].ScopeLogs[0].LogRecords[0]
	lr.TraceId, lr.SpanId, lr.SeverityText = nil, nil, ""
	lr.SeverityNumber = logspb.SeverityNumber_SEVERITY_NUMBER_WARN2
	r.ExportLogs(req)

	want := []string{
		`2026-01-02T15:04:05.123456Z INFO  trainer.optim      "two\nlines"  {path="/a b" n=7 lr=0.00031234567 empty="" exception.stacktrace=<4 lines> obj={k="v=1"}} trace=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7`,
		`2026-01-02T15:04:05.123456Z WARN2 trainer.optim      plain body`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// TestKeep: past Keep the oldest records go; counts and the report's
// header still tell all that arrived.
func TestKeep(t *testing.T) {
	r := &Receiver{Keep: 3}
	for i := range 10 {
		r.ExportLogs(logsRequest("n" + string(rune('0'+i))))
	}
	var bodies []string
	for _, l := range r.Logs() {
		bodies = append(bodies, formatValue(l.Body))
	}
	if strings.Join(bodies, ",") != "n7,n8,n9" {
		t.Errorf("kept %v, want the last 3", bodies)
	}
	var b strings.Builder
	r.Report(&b)
	if !strings.Contains(b.String(), "received 0 spans and 10 log records") || !strings.Contains(b.String(), "the last 0 spans and 3 log records") {
		t.Errorf("report:\n%s", b.String())
	}
}

// BenchmarkReport is the summary at Ctrl-C over a full receiver: 100,000
// log records (the default kept), each of its own trace, the worst case for
// grouping by trace.
func BenchmarkReport(b *testing.B) {
	r := &Receiver{}
	var logs []Log
	for i := range 100000 {
		logs = append(logs, Log{TraceID: fmt.Sprintf("%032x", i+1), SpanID: fmt.Sprintf("%016x", i+1)})
	}
	r.logs = logs
	r.nlogs = len(logs)
	for b.Loop() {
		r.Report(io.Discard)
	}
}
