package otlplog

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// A header value read from OTEL_EXPORTER_OTLP_HEADERS arrives at the
// collector as otlploggrpc sends it: both read the same variable, each
// sends one record to its own real gRPC receiver, and the metadata the two
// receive must be equal. The SDK decodes, then trims: a token file's
// encoded newline, an encoded space or tab at an end, is not sent.
func TestHeadersMatchSDK(t *testing.T) {
	for _, value := range []string{
		"Bearer%20tok%0A", // a token file's newline, encoded
		"%20tok", "tok%20", " tok ", "%09tok%0D%0A", "tok%C2%A0",
		"a%2Cb", "x%3Dy=z", "a+b", "Bearer tok",
	} {
		t.Run(value, func(t *testing.T) {
			compareHeaders(t, map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=" + value + ",x-team=ml"}, "authorization", "x-team")
		})
	}
}

// A signal-specific variable that does not parse gives way to the general
// one, as otlploggrpc reads its variables: the token set for every signal
// is sent, not none.
func TestHeadersFallBackAsSDK(t *testing.T) {
	for _, logs := range []string{"authorization=%zz", "x-team", "bad key=v"} {
		t.Run(logs, func(t *testing.T) {
			compareHeaders(t, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_HEADERS": logs,
				"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20tok"}, "authorization", "x-team")
		})
	}
}

// compareHeaders sets env, sends one record with otlploggrpc and one with
// zaplens, each to its own real gRPC receiver, and compares the metadata
// the two receive under keys.
func compareHeaders(t *testing.T, env map[string]string, keys ...string) {
	t.Helper()
	setEnv(t, env)
	sdkSide, ours := startOTLPServer(t, "127.0.0.1:0"), startOTLPServer(t, "127.0.0.1:0")

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+sdkSide.Addr)
	exp, err := otlploggrpc.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	var r log.Record
	r.SetBody(attribute.StringValue("hi"))
	sp.Logger("sdk").Emit(context.Background(), r)
	if err := sp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ours.Addr)
	p, err := NewLoggerProvider(context.Background(), WithLossWriter(&strings.Builder{}))
	if err != nil {
		t.Fatal(err)
	}
	p.Logger("ours").Emit(context.Background(), r)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := ours.WaitRecords(1, 5*time.Second); n != 1 {
		t.Fatalf("ours delivered %d records, want 1", n)
	}
	want, got := sdkSide.LastMetadata(), ours.LastMetadata()
	for _, k := range keys {
		if w, g := strings.Join(want.Get(k), "|"), strings.Join(got.Get(k), "|"); w != g {
			t.Errorf("%s: otlploggrpc sent %q, zaplens %q", k, w, g)
		}
	}
}
