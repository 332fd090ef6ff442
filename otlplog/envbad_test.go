package otlplog

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One bad variable never turns shipping off: as the OpenTelemetry spec
// says of an unparsable value, it is treated as not set, the provider
// ships with the default, and one warning on the loss writer names the
// variable and the problem (never a header's or a resource pair's value).
func TestBadVariableIgnoredAndTold(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	const defaultPort = "default" // the case needs a receiver on the default endpoint
	for _, tc := range []struct {
		key, value, want string
		also             map[string]string // "" deletes the receiver's endpoint; defaultPort listens on 4317
	}{
		{"OTEL_SDK_DISABLED", "1", `OTEL_SDK_DISABLED="1": want true or false`, nil},
		{"OTEL_LOGS_EXPORTER", "otlp,console", `OTEL_LOGS_EXPORTER="otlp,console": want otlp, console or none`, nil},
		{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "grpc://collector", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: ", nil},
		{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "http://admin:s3cret@collector:4317", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: ", nil},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://:4317", "OTEL_EXPORTER_OTLP_ENDPOINT: ", map[string]string{defaultPort: ""}},
		{"OTEL_EXPORTER_OTLP_INSECURE", "yes", `OTEL_EXPORTER_OTLP_INSECURE="yes": want true or false`, nil},
		{"OTEL_EXPORTER_OTLP_HEADERS", "token s3cret", "OTEL_EXPORTER_OTLP_HEADERS: pair 1 is not key=value", nil},
		{"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "authorization=Bearer s3cret", "OTEL_EXPORTER_OTLP_LOGS_HEADERS is set but no endpoint is", map[string]string{defaultPort: ""}},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", filepath.Join(dir, "missing.pem"), "OTEL_EXPORTER_OTLP_CERTIFICATE: ", nil},
		{"OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", notPEM, "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE: " + notPEM + ": no PEM certificate", nil},
		{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", notPEM, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (or their LOGS_ forms) must be set together", nil},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": want gzip or none`, nil},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s", `OTEL_EXPORTER_OTLP_TIMEOUT="10s": not an integer (milliseconds)`, nil},
		{"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "99999999999999", "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT=99999999999999: more milliseconds than a duration holds", nil},
		{"OTEL_BLRP_SCHEDULE_DELAY", "1s", `OTEL_BLRP_SCHEDULE_DELAY="1s": not an integer (milliseconds)`, nil},
		{"OTEL_BLRP_SCHEDULE_DELAY", "9223372036854775", "OTEL_BLRP_SCHEDULE_DELAY=9223372036854775: more milliseconds than a duration holds", nil},
		{"OTEL_BLRP_EXPORT_TIMEOUT", "0", "OTEL_BLRP_EXPORT_TIMEOUT=0: must be at least 1", nil},
		{"OTEL_BLRP_MAX_QUEUE_SIZE", "0", "OTEL_BLRP_MAX_QUEUE_SIZE=0: must be at least 1", nil},
		{"OTEL_BLRP_MAX_QUEUE_SIZE", "lots", `OTEL_BLRP_MAX_QUEUE_SIZE="lots": not an integer`, nil},
		{"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", "-5", "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE=-5: must be at least 1", nil},
		{"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", "1000", "batch size 1000 (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE or WithBatchSize) is larger than queue size 100", map[string]string{"OTEL_BLRP_MAX_QUEUE_SIZE": "100"}},
		{"ZAPLENS_QUEUE_BYTES", "100", "ZAPLENS_QUEUE_BYTES=100: must be at least 1024", nil},
		{"ZAPLENS_REQUEST_BYTES", "1000", "ZAPLENS_REQUEST_BYTES=1000: must be at least", nil},
		{"OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT", "-1", "OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT=-1: must be at least 0", nil},
		{"OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT", "x", `OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT="x": not an integer`, nil},
		{"OTEL_RESOURCE_ATTRIBUTES", "team=ml,s3cret", "OTEL_RESOURCE_ATTRIBUTES: pair 2 is not key=value", nil},
		{"ZAPLENS_SPOOL_BYTES", "1", "ZAPLENS_SPOOL_BYTES=1: must be at least", map[string]string{"ZAPLENS_SPOOL_DIR": "spool"}},
		{"OTEL_GO_X_OBSERVABILITY", "1", `OTEL_GO_X_OBSERVABILITY="1": want true or false`, nil},
		{"ZAPLENS_SPOOL_SYNC", "1s", `ZAPLENS_SPOOL_SYNC="1s": not an integer (milliseconds)`, map[string]string{"ZAPLENS_SPOOL_DIR": "spool"}},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			cleanEnv(t)
			addr := "127.0.0.1:0"
			if _, ok := tc.also[defaultPort]; ok {
				addr = "127.0.0.1:4317"
				if lis, err := net.Listen("tcp", addr); err != nil {
					t.Skipf("the default endpoint's port is taken: %v", err)
				} else {
					lis.Close()
				}
			}
			srv := startOTLPServer(t, addr)
			if addr == "127.0.0.1:0" {
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.Addr)
			}
			for k, v := range tc.also {
				switch {
				case k == defaultPort:
				case k == "ZAPLENS_SPOOL_DIR":
					t.Setenv(k, filepath.Join(t.TempDir(), v))
				default:
					t.Setenv(k, v)
				}
			}
			t.Setenv(tc.key, tc.value)
			var buf lockedBuffer
			p, err := NewLoggerProvider(context.Background(), WithLossWriter(&buf))
			if err != nil {
				t.Errorf("error %v, want none: the value is ignored", err)
			}
			emit(p, 10)
			if err := p.ForceFlush(context.Background()); err != nil {
				t.Errorf("flush: %v", err)
			}
			if got := srv.WaitRecords(10, 5*time.Second); got != 10 {
				t.Errorf("%d of 10 records delivered", got)
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
			out := buf.String()
			want := "zaplens: " + tc.want
			if !strings.Contains(out, want) || !strings.Contains(out, "; ignored, as if not set\n") {
				t.Errorf("loss writer has %q, want a warning with %q, ending \"; ignored, as if not set\"", out, want)
			}
			if strings.Count(out, tc.key) != strings.Count(want, tc.key) {
				t.Errorf("loss writer has %q: %s told more than once", out, tc.key)
			}
			if strings.Contains(out, "s3cret") {
				t.Errorf("warning shows a secret: %q", out)
			}
		})
	}
}

// A configuration that makes shipping impossible (a protocol zaplens does
// not speak, an invalid option) gives a provider that takes every record
// and counts it dropped, tells why on the loss writer when records come,
// at most once per voidTellInterval, and returns the cause from Shutdown.
func TestImpossibleConfigTellsAndShutdownReturnsIt(t *testing.T) {
	defer func(d time.Duration) { voidTellInterval = d }(voidTellInterval)
	voidTellInterval = 200 * time.Millisecond
	for _, tc := range []struct {
		name, want string
		env        map[string]string
		opts       []Option
	}{
		{"protocol thrift", `OTEL_EXPORTER_OTLP_PROTOCOL="thrift": want grpc or http/protobuf`, map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, nil},
		{"protocol http/json", `OTEL_EXPORTER_OTLP_LOGS_PROTOCOL="http/json": not supported`, map[string]string{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/json"}, nil},
		{"option", "WithQueueBytes(100): must be at least 1024", nil, []Option{WithQueueBytes(100)}},
		{"spool option", "WithSpoolBytes(1): must be at least", nil, []Option{WithSpool("/nonexistent/zaplens-spool"), WithSpoolBytes(1)}},
		{"option endpoint", "WithEndpoint: ", nil, []Option{WithEndpoint("grpc://x")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			var buf lockedBuffer
			p, err := NewLoggerProvider(context.Background(), append(tc.opts, WithLossWriter(&buf))...)
			if err == nil || !strings.Contains(err.Error(), "zaplens: no log records will be shipped: "+tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
			logger := p.Logger("x")
			if !logger.Enabled(context.Background(), logEnabledInfo) {
				t.Fatal("the logger is disabled: its records would not be counted")
			}
			emit(p, 5)
			time.Sleep(voidTellInterval / 4)
			emit(p, 5) // within the interval: not told again
			time.Sleep(voidTellInterval + voidTellInterval/4)
			emit(p, 1) // past it: told again
			if s := p.Stats(); s.Emitted != 11 || s.Dropped != 11 {
				t.Errorf("stats %v, want 11 emitted, 11 dropped", s)
			}
			err = p.Shutdown(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "11 dropped") {
				t.Errorf("shutdown: %v, want the cause and the count", err)
			}
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			want := []string{
				fmt.Sprintf("zaplens: no log records are shipped (1 dropped so far): %s", tc.want),
				fmt.Sprintf("zaplens: no log records are shipped (11 dropped so far): %s", tc.want),
			}
			if len(lines) != 2 || !strings.HasPrefix(lines[0], want[0]) || !strings.HasPrefix(lines[1], want[1]) {
				t.Errorf("loss writer has\n%s\nwant lines starting\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
