package transport

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
)

// secretToken is the bearer token the tests' collectors expect.
const (
	secretToken = "s3cret-t0ken-value"
	authValue   = "Bearer " + secretToken
)

// testRequest builds an ExportLogsServiceRequest of n records and its bytes.
func testRequest(t testing.TB, n int) (*collogspb.ExportLogsServiceRequest, []byte) {
	t.Helper()
	recs := make([]*logspb.LogRecord, n)
	for i := range recs {
		recs[i] = &logspb.LogRecord{
			TimeUnixNano:   1_700_000_000_000_000_000 + uint64(i),
			SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO,
			SeverityText:   "info",
			Body:           &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: fmt.Sprintf("record %d %s", i, strings.Repeat("x", 40))}},
			Attributes: []*commonpb.KeyValue{{
				Key:   "i",
				Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(i)}},
			}},
		}
	}
	req := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{
			Key:   "service.name",
			Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "transport-test"}},
		}}},
		ScopeLogs: []*logspb.ScopeLogs{{
			Scope:      &commonpb.InstrumentationScope{Name: "zaplens"},
			LogRecords: recs,
		}},
	}}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return req, b
}

// loopback is a listener on a fresh loopback port; whoever serves on it
// closes it.
func loopback(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// endpointOf is raw as ParseEndpoint reads it, plaintext unless a scheme
// says TLS; a test's own endpoints are good ones.
func endpointOf(raw string, p Protocol) Endpoint {
	e, err := ParseEndpoint(raw, p, true)
	if err != nil {
		panic(err)
	}
	return e
}

// newClient makes a Client that the test closes at its end.
func newClient(t testing.TB, cfg Config) Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// export runs one Export with a background context and times it.
func export(c Client, body []byte, n int, mode Mode) (Result, time.Duration) {
	start := time.Now()
	r := c.Export(context.Background(), body, n, mode)
	return r, time.Since(start)
}

// checkClean fails when an error text holds a secret or raw control text.
func checkClean(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	s := err.Error()
	for _, bad := range []string{secretToken, "\n", "\r", "\x1b", "\x00"} {
		if strings.Contains(s, bad) {
			t.Errorf("error text holds %q: %q", bad, s)
		}
	}
}

// within fails when d is over limit.
func within(t testing.TB, what string, d, limit time.Duration) {
	t.Helper()
	if d > limit {
		t.Errorf("%s took %v, want at most %v", what, d, limit)
	}
}

// waitFor polls cond until it holds, and fails the test after 5s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 5s", what)
		}
	}
}
