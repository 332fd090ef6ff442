package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// Each variable NewLoggerProvider reads, set the way a user sets it, against
// the Collector's receiver: the provider is built from the environment
// alone (no options but the loss writer) and what arrives is checked.

// provFromEnv builds a provider from the environment, shut down at the end
// of the test; loss reports go to the returned buffer.
func provFromEnv(t *testing.T, opts ...otlplog.Option) (*otlplog.LoggerProvider, *testsupport.LockedBuffer) {
	t.Helper()
	losses := &testsupport.LockedBuffer{}
	p, err := otlplog.NewLoggerProvider(context.Background(), append([]otlplog.Option{otlplog.WithLossWriter(losses)}, opts...)...)
	if err != nil {
		t.Fatalf("NewLoggerProvider: %v", err)
	}
	t.Cleanup(func() { _, _ = e2eShutdown(t, p, 5*time.Second) })
	return p, losses
}

// provLog logs n lines of four fields through the bridge.
func provLog(p *otlplog.LoggerProvider, n int) {
	l := e2eLogger(p, e2eDiscard{})
	for i := range n {
		l.Info("env line", zap.Int("seq", i), zap.Int("step", 1), zap.Float64("loss", 0.5), zap.String("phase", "forward"))
	}
}

func TestProviderEnvEndpoint(t *testing.T) {
	r := StartReceiver(t)
	down := StartReceiver(t, Stopped())
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"OTEL_EXPORTER_OTLP_ENDPOINT http", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL()}},
		{"LOGS_ENDPOINT wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": down.URL(), "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": r.URL()}},
		{"scheme-less with INSECURE", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.Endpoint(), "OTEL_EXPORTER_OTLP_INSECURE": "true"}},
		{"LOGS_INSECURE wins", map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": r.Endpoint(), "OTEL_EXPORTER_OTLP_INSECURE": "false", "OTEL_EXPORTER_OTLP_LOGS_INSECURE": "TRUE"}},
		{"gzip", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL(), "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}},
		{"LOGS_COMPRESSION gzip", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL(), "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION": "gzip"}},
		{"OTEL_LOGS_EXPORTER otlp", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL(), "OTEL_LOGS_EXPORTER": "otlp"}},
		{"PROTOCOL grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL(), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		// OTLP/HTTP: the generic endpoint is a base URL, to which /v1/logs
		// is added; the logs endpoint is the whole URL.
		{"PROTOCOL http/protobuf", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.HTTPURL(), "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}},
		{"PROTOCOL http/protobuf, base with /", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.HTTPURL() + "/", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}},
		{"LOGS_PROTOCOL wins", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.HTTPURL(), "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf"}},
		{"LOGS_ENDPOINT http, as given", map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": r.HTTPURL() + "/v1/logs", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}},
		{"http/protobuf gzip", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.HTTPURL(), "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testsupport.Env(t, tc.env)
			r.Reset()
			p, _ := provFromEnv(t)
			provLog(p, 100)
			e2eFlush(t, p)
			if r.Count() != 100 {
				t.Errorf("received %d of 100; stats %s", r.Count(), p.Stats())
			}
			want := GRPC
			if v := tc.env["OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"] + tc.env["OTEL_EXPORTER_OTLP_PROTOCOL"]; strings.HasPrefix(v, "http/protobuf") {
				want = HTTP
			}
			for _, c := range r.Calls() {
				if c.Proto != want {
					t.Errorf("an export came over %s, want %s", c.Proto, want)
				}
			}
		})
	}
}

// The logs endpoint is used as given over OTLP/HTTP: without /v1/logs the
// collector answers 404, the records fail, and the error says which path
// to check.
func TestProviderEnvHTTPLogsEndpointAsGiven(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", r.HTTPURL())
	p, losses := provFromEnv(t)
	provLog(p, 10)
	err := p.ForceFlush(context.Background())
	if st := p.Stats(); st.Failed != 10 || r.Count() != 0 {
		t.Errorf("stats %s, received %d; want 10 failed", st, r.Count())
	}
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "/v1/logs") {
		t.Errorf("ForceFlush error %v, want a 404 that names /v1/logs", err)
	}
	t.Logf("ForceFlush: %v; loss writer: %s", err, losses.String())
}

// eachVariable runs f for the generic and the logs-specific form of an
// OTLP variable (OTEL_EXPORTER_OTLP_X, OTEL_EXPORTER_OTLP_LOGS_X) on each
// protocol, each in a clean environment with the protocol set.
func eachVariable(t *testing.T, generic string, f func(t *testing.T, key string, proto Proto)) {
	logs := strings.Replace(generic, "OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_LOGS_", 1)
	for _, proto := range protos {
		for _, key := range []string{generic, logs} {
			t.Run(proto.Short()+"/"+key, func(t *testing.T) {
				testsupport.CleanEnv(t)
				t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", string(proto))
				f(t, key, proto)
			})
		}
	}
}

// A scheme-less endpoint is TLS by default, with the CA from the variable.
func TestProviderEnvCertificate(t *testing.T) {
	r := StartReceiver(t, WithTLS())
	eachVariable(t, "OTEL_EXPORTER_OTLP_CERTIFICATE", func(t *testing.T, key string, proto Proto) {
		r.Reset()
		endpoint := r.Endpoint()
		if proto == HTTP {
			endpoint = r.HTTPEndpoint()
		}
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
		t.Setenv(key, r.CAFile())
		p, _ := provFromEnv(t)
		provLog(p, 10)
		e2eFlush(t, p)
		if r.Count() != 10 {
			t.Errorf("received %d of 10 over TLS", r.Count())
		}
	})
}

func TestProviderEnvHeaders(t *testing.T) {
	r := StartReceiver(t, WithBearerToken("s3cret-token"))
	eachVariable(t, "OTEL_EXPORTER_OTLP_HEADERS", func(t *testing.T, key string, proto Proto) {
		r.Reset()
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URLFor(proto))
		t.Setenv(key, "x-team=ml,Authorization=Bearer%20s3cret-token")
		p, _ := provFromEnv(t)
		provLog(p, 10)
		e2eFlush(t, p)
		if r.Count() != 10 || r.AuthFailures() != 0 {
			t.Errorf("received %d, auth failures %d", r.Count(), r.AuthFailures())
		}
	})
}

// OTEL_EXPORTER_OTLP_TIMEOUT bounds each attempt to a collector slower than
// it, and ZAPLENS_RETRY_MAX_ELAPSED the retries: the records fail, counted,
// instead of waiting.
func TestProviderEnvTimeout(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t, WithExportDelay(3*time.Second))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL())
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "300")
	t.Setenv("ZAPLENS_RETRY_MAX_ELAPSED", "300")
	p, _ := provFromEnv(t)
	provLog(p, 10)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := p.ForceFlush(ctx)
	if d := time.Since(start); d > 2*time.Second || err == nil {
		t.Errorf("flush took %v with a 300ms export timeout: %v", d, err)
	}
	if st := p.Stats(); st.Failed != 10 {
		t.Errorf("stats %s, want 10 failed", st)
	}
}

func TestProviderEnvBatch(t *testing.T) {
	t.Run("OTEL_BLRP_MAX_QUEUE_SIZE", func(t *testing.T) {
		testsupport.CleanEnv(t)
		r := StartReceiver(t, Stopped())
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL())
		t.Setenv("OTEL_BLRP_MAX_QUEUE_SIZE", "500")
		p, _ := provFromEnv(t)
		provLog(p, 2000) // collector down: the queue keeps 500 at most
		// The rest is lost, counted: dropped, or failed when a batch
		// waiting to retry gave way to newer records.
		if st := p.Stats(); st.Dropped+st.Failed < 1500 || st.Queued > 500 || st.Emitted != 2000 {
			t.Errorf("stats %s, want 1500 or more lost, at most 500 queued", st)
		}
	})
	t.Run("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", func(t *testing.T) {
		testsupport.CleanEnv(t)
		r := StartReceiver(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL())
		t.Setenv("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", "10")
		p, _ := provFromEnv(t)
		provLog(p, 100)
		e2eFlush(t, p)
		if distinct, _ := e2eDistinct(t, r.Records()); distinct != 100 || r.Exports() < 10 {
			t.Errorf("received %d distinct lines (%d in all) in %d exports, want 100 in 10 or more", distinct, r.Count(), r.Exports())
		}
		for _, c := range r.Calls() {
			if c.Records > 10 {
				t.Errorf("an export of %d records, over the batch size", c.Records)
			}
		}
	})
	t.Run("OTEL_BLRP_SCHEDULE_DELAY", func(t *testing.T) {
		testsupport.CleanEnv(t)
		r := StartReceiver(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL())
		t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "50")
		p, _ := provFromEnv(t)
		provLog(p, 5) // far below a batch: only the delay sends them
		// Within 900ms: the default delay, 1s, would not send them by then.
		if !r.WaitForCount(t, 5, 900*time.Millisecond) {
			t.Errorf("received %d of 5 within 900ms with a 50ms delay", r.Count())
		}
	})
	t.Run("OTEL_BLRP_EXPORT_TIMEOUT", func(t *testing.T) {
		testsupport.CleanEnv(t)
		r := StartReceiver(t, WithExportDelay(3*time.Second))
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL())
		t.Setenv("OTEL_BLRP_EXPORT_TIMEOUT", "200")
		t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "10")
		p, _ := provFromEnv(t)
		provLog(p, 10)
		ok := testsupport.Eventually(3*time.Second, func() bool { return p.Stats().Failed == 10 })
		if !ok {
			t.Errorf("stats %s, want 10 failed by the 200ms export timeout", p.Stats())
		}
	})
}

func TestProviderEnvOff(t *testing.T) {
	r := StartReceiver(t)
	for _, kv := range [][2]string{{"OTEL_SDK_DISABLED", "true"}, {"OTEL_LOGS_EXPORTER", "none"}} {
		t.Run(kv[0], func(t *testing.T) {
			testsupport.CleanEnv(t)
			r.Reset()
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL())
			t.Setenv(kv[0], kv[1])
			p, _ := provFromEnv(t)
			provLog(p, 10)
			e2eFlush(t, p)
			if r.Count() != 0 || p.Stats() != (otlplog.Stats{}) {
				t.Errorf("no-op provider delivered %d, stats %s", r.Count(), p.Stats())
			}
		})
	}
}

func TestProviderEnvResourceAndLimits(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.URL())
	t.Setenv("OTEL_SERVICE_NAME", "trainer")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=ml,deployment.environment.name=test")
	t.Setenv("SLURM_PROCID", "6")
	t.Setenv("SLURM_LOCALID", "2")
	t.Setenv("SLURM_NTASKS", "8")
	t.Setenv("OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT", "4")
	t.Setenv("OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT", "64")
	p, _ := provFromEnv(t)
	provLog(p, 1)
	e2eFlush(t, p)
	recs := r.Records()
	if len(recs) != 1 {
		t.Fatalf("received %d records", len(recs))
	}
	res := recs[0].Resource
	for k, v := range map[string]any{"service.name": "trainer", "team": "ml", "deployment.environment.name": "test",
		"rank": int64(6), "local_rank": int64(2), "world_size": int64(8)} {
		if res[k] != v {
			t.Errorf("resource %s = %v (%T), want %v", k, res[k], res[k], v)
		}
	}
	if res["host.name"] == nil || res["process.pid"] == nil {
		t.Errorf("no host or process attributes: %v", res)
	}
	if got := recs[0].Attrs["phase"]; got != "forw" {
		t.Errorf("phase = %v, want it cut to 4 characters", got)
	}
}

// Bad values fail NewLoggerProvider with a message naming them, and the
// no-op provider it returns delivers nothing and breaks nothing.
func TestProviderEnvBad(t *testing.T) {
	r := StartReceiver(t)
	// A value that cannot be read is ignored, as if not set, with one
	// warning naming the variable: the provider ships with the default.
	for _, kv := range [][2]string{
		{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "grpc://" + r.Endpoint()},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "Authorization: Bearer s3cret"},
		{"OTEL_BLRP_MAX_QUEUE_SIZE", "-1"},
		{"OTEL_BLRP_SCHEDULE_DELAY", "soon"},
	} {
		t.Run(kv[0], func(t *testing.T) {
			w, err, shutErr := provShipTen(t, r, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": r.URL(), kv[0]: kv[1]})
			if err != nil {
				t.Errorf("error %v, want none: the value is ignored", err)
			}
			if shutErr != nil || r.Count() != 10 {
				t.Errorf("shutdown %v, received %d of 10", shutErr, r.Count())
			}
			if !strings.Contains(w, "zaplens: "+kv[0]) || !strings.Contains(w, "ignored, as if not set") {
				t.Errorf("loss writer has %q, want a warning naming %s", w, kv[0])
			}
			if strings.Contains(w, "s3cret") {
				t.Errorf("the warning shows the header: %q", w)
			}
		})
	}
	// A protocol zaplens does not speak makes shipping impossible: the
	// error names it, nothing is sent, and Shutdown says so again.
	for _, kv := range [][2]string{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
		{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "grpc/protobuf"},
	} {
		t.Run(kv[0], func(t *testing.T) {
			_, err, shutErr := provShipTen(t, r, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": r.URL(), kv[0]: kv[1]})
			if err == nil || !strings.Contains(err.Error(), kv[0]) {
				t.Errorf("error %v, want one naming %s", err, kv[0])
			}
			if shutErr == nil || !strings.Contains(shutErr.Error(), kv[0]) || r.Count() != 0 {
				t.Errorf("shutdown %v, received %d; want the error again and nothing sent", shutErr, r.Count())
			}
		})
	}
}

// provShipTen builds a provider from env alone, over a clean environment,
// logs ten records and shuts it down, r reset first: what the loss writer
// got, and what NewLoggerProvider and Shutdown return.
func provShipTen(t *testing.T, r *Receiver, env map[string]string) (losses string, newErr, shutdownErr error) {
	t.Helper()
	testsupport.Env(t, env)
	r.Reset()
	var w strings.Builder
	p, newErr := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(&w))
	provLog(p, 10)
	shutdownErr = p.Shutdown(context.Background())
	return w.String(), newErr, shutdownErr
}
