package integration

import (
	"context"
	"testing"
	"time"

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
