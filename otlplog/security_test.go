package otlplog

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Each case of the security review, kept as a regression test: a setting
// is used as written or refused with a clear message (an option's as
// NewLoggerProvider's error, a variable's as a warning on the loss
// writer, the variable ignored), and no message quotes a secret.
func TestSecurityRefusals(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ca.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		opts []Option
		want string
	}{
		{"zoned address with a stray port colon", nil, []Option{WithEndpoint("collector.internal:4317:"), WithInsecure()}, "empty port"},
		{"unbracketed IPv6", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "fe80::1:4317"}, nil, "IPv6 address needs brackets"},
		{"query in the endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4317/?token=s3cret"}, nil, "query"},
		{"headers to the default endpoint", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20s3cret"}, nil, "not sent in plaintext to the default endpoint"},
		{"gRPC header key", nil, []Option{WithEndpoint("https://c:4317"), WithHeaders(map[string]string{"x!y": "1"})}, `"x!y" is not valid for grpc`},
		{"grpc- prefix", nil, []Option{WithEndpoint("https://c:4317"), WithHeaders(map[string]string{"grpc-timeout": "1"})}, "not starting with grpc-"},
		{"keys differing in case", nil, []Option{WithEndpoint("https://c:4317"), WithHeaders(map[string]string{"Authorization": "s3cret", "authorization": "s3cret2"})}, "given twice"},
		{"certificate is a FIFO", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": fifo}, nil, "not a regular file"},
		{"certificate is /dev/zero", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/dev/zero"}, nil, "not a regular file"},
		{"bad percent escape in the resource", map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "team=ml,api_key=abc%zzSECRET"}, nil, `pair 2 ("api_key"): bad percent-encoding`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			var buf lockedBuffer
			done := make(chan string, 1)
			go func() {
				p, err := NewLoggerProvider(context.Background(), append([]Option{WithLossWriter(&buf)}, tc.opts...)...)
				_ = shutdownWithin(p, 100*time.Millisecond)
				if err != nil {
					done <- err.Error()
				}
				done <- ""
			}()
			var msg string
			select {
			case msg = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("NewLoggerProvider blocked")
			}
			msg += buf.String()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error and warnings %q, want one with %q", msg, tc.want)
			}
			if strings.Contains(msg, "s3cret") || strings.Contains(msg, "SECRET") {
				t.Errorf("message shows a secret: %v", msg)
			}
		})
	}
}

// An option's bad value is reported under the option's name, not under a
// variable that is not set.
func TestOptionErrorsNameTheOption(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{WithExporterName("kafka"), `WithExporterName("kafka")`},
		{WithCompression("zstd"), `WithCompression("zstd")`},
	} {
		_, err := NewLoggerProvider(context.Background(), WithLossWriter(nil), tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}

// Credential headers over a plaintext endpoint the user set on another
// host go, with one warning; WithInsecure over an https:// endpoint from
// the environment is told.
func TestPlaintextWarnings(t *testing.T) {
	cleanEnv(t)
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), WithLossWriter(&buf), WithEndpoint("http://192.0.2.1:1"),
		WithHeaders(map[string]string{"authorization": "Bearer s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Shutdown(context.Background())
	if !strings.Contains(buf.String(), "travel in plaintext") || strings.Contains(buf.String(), "s3cret") {
		t.Errorf("warning %q", buf.String())
	}
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://127.0.0.1:1")
	buf = lockedBuffer{}
	p, err = NewLoggerProvider(context.Background(), WithLossWriter(&buf), WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Shutdown(context.Background())
	if !strings.Contains(buf.String(), "WithInsecure turns TLS off for the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Errorf("warning %q", buf.String())
	}
}
