package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"google.golang.org/grpc/credentials"
)

// harnessExporter is a plain otlploggrpc exporter to r (TLS when r has it),
// with the given extra options. It does not involve zaplens.
func harnessExporter(t testing.TB, r *Receiver, extra ...otlploggrpc.Option) sdklog.Exporter {
	t.Helper()
	opts := []otlploggrpc.Option{otlploggrpc.WithEndpoint(r.Endpoint())}
	if tc := r.ClientTLS(); tc != nil {
		opts = append(opts, otlploggrpc.WithTLSCredentials(credentials.NewTLS(tc)))
	} else {
		opts = append(opts, otlploggrpc.WithInsecure())
	}
	exp, err := otlploggrpc.New(context.Background(), append(opts, extra...)...)
	if err != nil {
		t.Fatalf("otlploggrpc.New: %v", err)
	}
	return exp
}

// harnessEmit sends n records through a simple processor straight to exp.
func harnessEmit(t testing.TB, exp sdklog.Exporter, n int) error {
	t.Helper()
	p := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
	defer func() { _ = p.Shutdown(context.Background()) }()
	l := p.Logger("harness")
	for i := 0; i < n; i++ {
		var rec log.Record
		rec.SetBody(attribute.StringValue("hello"))
		rec.SetSeverity(log.SeverityInfo)
		rec.AddAttributes(attribute.Int("i", i))
		l.Emit(context.Background(), rec)
	}
	return nil
}

func TestReceiverHarness(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		r := StartReceiver(t)
		_ = harnessEmit(t, harnessExporter(t, r), 3)
		if !r.WaitForCount(t, 3, 5*time.Second) {
			t.Fatalf("got %d records, want 3", r.Count())
		}
		recs := r.Records()
		if recs[0].Scope != "harness" || recs[0].BodyString != "hello" || recs[2].Attrs["i"] != int64(2) {
			t.Fatalf("unexpected record: %+v", recs[2])
		}
	})
	t.Run("tls+bearer", func(t *testing.T) {
		r := StartReceiver(t, WithTLS(), WithBearerToken("s3cret"))
		_ = harnessEmit(t, harnessExporter(t, r, otlploggrpc.WithHeaders(map[string]string{"authorization": "Bearer s3cret"})), 2)
		if !r.WaitForCount(t, 2, 5*time.Second) {
			t.Fatalf("got %d records, want 2", r.Count())
		}
		_ = harnessEmit(t, harnessExporter(t, r,
			otlploggrpc.WithHeaders(map[string]string{"authorization": "Bearer wrong"}),
			otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false})), 2)
		if r.AuthFailures() != 2 || r.Count() != 2 {
			t.Fatalf("auth failures %d, count %d; want 2, 2", r.AuthFailures(), r.Count())
		}
	})
	t.Run("stopped-then-restart", func(t *testing.T) {
		r := StartReceiver(t, Stopped())
		r.Start(t)
		_ = harnessEmit(t, harnessExporter(t, r), 1)
		r.Restart(t)
		_ = harnessEmit(t, harnessExporter(t, r), 1)
		if !r.WaitForCount(t, 2, 5*time.Second) {
			t.Fatalf("got %d records, want 2", r.Count())
		}
	})
	t.Run("delay", func(t *testing.T) {
		r := StartReceiver(t, WithExportDelay(300*time.Millisecond))
		start := time.Now()
		_ = harnessEmit(t, harnessExporter(t, r), 1)
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Fatalf("export took %v, want >= 300ms", d)
		}
		if r.Count() != 1 || r.Exports() != 1 {
			t.Fatalf("count %d exports %d", r.Count(), r.Exports())
		}
	})
}

// harnessPost sends n records to r's OTLP/HTTP side with net/http, as
// protobuf, and returns the status code.
func harnessPost(t testing.TB, r *Receiver, header map[string]string, n int) int {
	t.Helper()
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName("harness-http")
	for i := 0; i < n; i++ {
		lr := sl.LogRecords().AppendEmpty()
		lr.Body().SetStr("hello")
		lr.Attributes().PutInt("i", int64(i))
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, r.HTTPURL()+"/v1/logs", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: r.ClientTLS()}, Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestReceiverHarnessHTTP(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		r := StartReceiver(t)
		if code := harnessPost(t, r, nil, 3); code != http.StatusOK {
			t.Fatalf("status %d", code)
		}
		recs := r.Records()
		if len(recs) != 3 || recs[0].Scope != "harness-http" || r.Calls()[0].Proto != HTTP {
			t.Fatalf("records %+v, calls %+v", recs, r.Calls())
		}
	})
	t.Run("tls+bearer", func(t *testing.T) {
		r := StartReceiver(t, WithTLS(), WithBearerToken("s3cret"))
		if code := harnessPost(t, r, map[string]string{"Authorization": "Bearer s3cret"}, 2); code != http.StatusOK {
			t.Fatalf("right token: status %d", code)
		}
		if code := harnessPost(t, r, map[string]string{"Authorization": "Bearer wrong"}, 2); code != http.StatusUnauthorized {
			t.Fatalf("wrong token: status %d", code)
		}
		if r.AuthFailures() != 1 || r.Count() != 2 {
			t.Fatalf("auth failures %d, count %d; want 1, 2", r.AuthFailures(), r.Count())
		}
	})
	t.Run("hook answers", func(t *testing.T) {
		r := StartReceiver(t, WithConsumeHook(func(call int, _ plog.Logs) error {
			switch call {
			case 1:
				st, _ := status.New(codes.ResourceExhausted, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(2 * time.Second)})
				return st.Err()
			case 2:
				return status.Error(codes.InvalidArgument, "bad")
			case 3:
				return consumererror.NewPermanent(errors.New("permanent"))
			case 4:
				return errors.New("transient")
			}
			return nil
		}))
		for i, want := range []int{429, 400, 500, 503, 200} {
			if code := harnessPost(t, r, nil, 1); code != want {
				t.Errorf("call %d: status %d, want %d", i+1, code, want)
			}
		}
		if r.Count() != 1 || r.Exports() != 5 {
			t.Errorf("count %d, exports %d", r.Count(), r.Exports())
		}
	})
	t.Run("default limit", func(t *testing.T) {
		// A gRPC message over 4 MiB is refused: the harness keeps the
		// Collector's default.
		r := StartReceiver(t)
		exp := harnessExporter(t, r, otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}))
		p := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)))
		defer func() { _ = p.Shutdown(context.Background()) }()
		var rec log.Record
		rec.SetBody(attribute.StringValue(strings.Repeat("x", 5<<20)))
		p.Logger("big").Emit(context.Background(), rec)
		if r.Count() != 0 {
			t.Fatalf("a 5 MiB gRPC message was accepted: the receiver's limit is not the default 4 MiB")
		}
	})
}
