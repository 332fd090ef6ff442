package otlplog

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// These tests export over real OTLP/gRPC to an in-process endpoint on
// loopback; the integration module repeats the important ones against the
// Collector's own receiver.

// emitAndShutdown makes a provider from the environment, emits n records
// to it and shuts it down, failing the test on Shutdown's error.
func emitAndShutdown(t *testing.T, n int) {
	t.Helper()
	p := newTestProvider(t)
	emit(p, n)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestOTLPDeliversBurstInFull(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.Addr)
	p := newTestProvider(t)
	// Busy-rank steps of 10,000 lines at full speed, each followed by
	// "compute" until the queue has drained: a step fits the default queue
	// even if nothing drains during it, however slow the machine.
	const steps, n = 3, 30000
	for range steps {
		emit(p, n/steps)
		for deadline := time.Now().Add(10 * time.Second); p.Stats().Queued > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := shutdownWithin(p, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	if got := srv.Records.Load(); got != n || s != (Stats{Emitted: n, Exported: n}) {
		t.Errorf("server got %d, stats %v", got, s)
	}
}

func TestOTLPLogsVariablesWinAndResourceArrives(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+freeAddr(t))
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", srv.Addr)
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "false")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_INSECURE", "true")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "gzip")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "5000")
	t.Setenv("OTEL_SERVICE_NAME", "trainer")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=ml,service.name=ignored")
	t.Setenv("RANK", "3")
	t.Setenv("LOCAL_RANK", "1")
	t.Setenv("WORLD_SIZE", "8")
	t.Setenv("OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT", "3")
	t.Setenv("OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT", "2")
	emitAndShutdown(t, 1)
	rls := srv.Resources()
	if len(rls) != 1 {
		t.Fatalf("got %d resource logs", len(rls))
	}
	res := map[string]string{}
	for _, kv := range rls[0].Resource.Attributes {
		res[kv.Key] = kv.Value.String()
	}
	for k, v := range map[string]string{"service.name": "trainer", "team": "ml", "rank": "3", "local_rank": "1", "world_size": "8"} {
		if !strings.Contains(res[k], v) {
			t.Errorf("resource %s = %q, want %q", k, res[k], v)
		}
	}
	for _, k := range []string{"host.name", "process.pid", "telemetry.sdk.language"} {
		if res[k] == "" {
			t.Errorf("resource has no %s", k)
		}
	}
	if _, ok := res["process.command_args"]; ok {
		t.Error("resource carries the command line")
	}
	rec := rls[0].ScopeLogs[0].LogRecords[0]
	if len(rec.Attributes) != 3 || rec.DroppedAttributesCount != 1 {
		t.Errorf("count limit: %d attributes, %d dropped", len(rec.Attributes), rec.DroppedAttributesCount)
	}
	if body := rec.Body.GetStringValue(); body != "step done" {
		t.Errorf("body %q", body)
	}
}

func TestOTLPBearerHeader(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0", withToken("s3cret-token"))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.Addr)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20s3cret-token")
	emitAndShutdown(t, 100)
	if got := srv.Records.Load(); got != 100 {
		t.Errorf("server got %d", got)
	}

	// A wrong token: every record fails, counted, and no message shows it.
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20wr0ng-token")
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), WithLossWriter(&buf), WithLossReport(20*time.Millisecond, nil))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 100)
	flushErr := p.ForceFlush(context.Background())
	time.Sleep(50 * time.Millisecond)
	err = p.Shutdown(context.Background())
	if s := p.Stats(); s.Failed != 100 || s.Exported != 0 {
		t.Errorf("wrong token: stats %v", s)
	}
	var de *DeliveryError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("Shutdown error %v", err)
	}
	for _, msg := range []string{flushErr.Error(), err.Error(), buf.String()} {
		if strings.Contains(msg, "wr0ng") || strings.Contains(msg, "s3cret") {
			t.Errorf("a message shows the token: %s", msg)
		}
	}
	if !strings.Contains(buf.String(), "100 failed to export") {
		t.Errorf("loss report %q", buf.String())
	}
}

func TestOTLPTLS(t *testing.T) {
	cleanEnv(t)
	certs := testCerts(t)
	srv := startOTLPServer(t, "127.0.0.1:0", withServerTLS(certs.Pair))

	// A scheme-less endpoint is TLS; the test's CA comes from the variable.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.Addr)
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", certs.CA)
	emitAndShutdown(t, 10)
	if got := srv.Records.Load(); got != 10 {
		t.Errorf("server got %d over TLS", got)
	}

	// Without the CA, the system roots do not trust the server: exports fail
	// rather than fall back to plaintext.
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "")
	p := newTestProvider(t, WithOTLPTimeout(time.Second))
	emit(p, 10)
	_ = p.ForceFlush(context.Background())
	if s := p.Stats(); s.Failed != 10 {
		t.Errorf("untrusted server: %v", s)
	}
	_ = p.Shutdown(context.Background())

	// Mutual TLS: client certificate and key from the variables.
	mtls := startOTLPServer(t, "127.0.0.1:0", func(_ *otlpServer, o *[]grpc.ServerOption) {
		*o = append(*o, grpc.Creds(credentials.NewTLS(&tls.Config{
			Certificates: []tls.Certificate{certs.Pair}, ClientCAs: certs.Pool, ClientAuth: tls.RequireAndVerifyClientCert})))
	})
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "https://"+mtls.Addr)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", certs.CA)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE", certs.Cert)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY", certs.Key)
	emitAndShutdown(t, 10)
	if got := mtls.Records.Load(); got != 10 {
		t.Errorf("server got %d over mutual TLS", got)
	}
}

func TestOTLPPartialSuccessCountsRejected(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0")
	srv.Reject = 3
	p := newTestProvider(t, WithEndpoint("http://"+srv.Addr), WithBatchSize(100), WithScheduleDelay(time.Hour))
	emit(p, 100)
	_ = p.Shutdown(context.Background())
	if s := p.Stats(); s.Exported != 97 || s.Failed != 3 {
		t.Errorf("partial success: %v", s)
	}
}

func TestOTLPCollectorDownThenUp(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the exporter's retry")
	}
	cleanEnv(t)
	addr := freeAddr(t)
	p := newTestProvider(t, WithEndpoint("http://"+addr), WithScheduleDelay(100*time.Millisecond))
	emit(p, 100)
	time.Sleep(300 * time.Millisecond) // the first export attempt fails
	srv := startOTLPServer(t, addr)
	if got := srv.WaitRecords(100, 15*time.Second); got != 100 {
		t.Errorf("server got %d after coming up; stats %v", got, p.Stats())
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestOTLPShutdownWithCollectorDown(t *testing.T) {
	cleanEnv(t)
	p := newTestProvider(t, WithEndpoint("http://"+freeAddr(t)))
	emit(p, 1000)
	start := time.Now()
	err := shutdownWithin(p, time.Second)
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("Shutdown took %v with a 1s deadline", d)
	}
	var de *DeliveryError
	if !errors.As(err, &de) || de.Stats.Queued+de.Stats.Failed != 1000 {
		t.Errorf("Shutdown error %v", err)
	}
}

// A Shutdown without deadline, the usual defer in main, is bounded too.
func TestOTLPShutdownWithoutDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("waits DefaultShutdownTimeout")
	}
	cleanEnv(t)
	p := newTestProvider(t, WithEndpoint("http://"+freeAddr(t)), WithBatchSize(10))
	emit(p, 1000) // 100 batches: unbounded, 100 OTLP timeouts
	start := time.Now()
	err := p.Shutdown(context.Background())
	if d := time.Since(start); d > DefaultShutdownTimeout+2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	var de *DeliveryError
	if !errors.As(err, &de) || de.Stats.Exported != 0 {
		t.Errorf("Shutdown error %v", err)
	}
}

// Invalid UTF-8 in the resource is repaired, not sent to sink every
// export; and a path given to the gRPC transport is warned about.
func TestOTLPResourceUTF8AndGRPCPath(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=caf%E9")
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), WithEndpoint("http://"+srv.Addr+"/v1/logs"),
		WithServiceName("svc\xff"), WithLossWriter(&buf))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 10)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := srv.Records.Load(); got != 10 {
		t.Fatalf("%d records arrived, want 10", got)
	}
	attrs := map[string]string{}
	for _, kv := range srv.Resources()[0].Resource.Attributes {
		attrs[kv.Key] = kv.Value.GetStringValue()
	}
	if attrs["team"] != "caf\uFFFD" || attrs["service.name"] != "svc\uFFFD" {
		t.Errorf("resource %v", attrs)
	}
	if !strings.Contains(buf.String(), "has a path, which OTLP/gRPC does not use") || !strings.Contains(buf.String(), "4318") {
		t.Errorf("no warning of the path: %q", buf.String())
	}
}
