package transport

import (
	"context"
	"crypto/tls"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewRejectsBadConfig(t *testing.T) {
	e := endpointOf("x:1", GRPC)
	tests := []Config{
		{Protocol: GRPC},
		{Protocol: "http/json", Endpoint: endpointOf("http://x/v1/logs", HTTPProtobuf)},
		{Protocol: "", Endpoint: e},
		{Protocol: GRPC, Endpoint: e, Timeout: -time.Second},
	}
	for _, cfg := range tests {
		if c, err := New(cfg); err == nil {
			_ = c.Close(context.Background())
			t.Errorf("New(%+v) accepted", cfg)
		} else if strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("error not sanitized: %q", err)
		} else if strings.HasPrefix(err.Error(), "transport:") {
			// The caller says whose error it is; a prefix here repeats.
			t.Errorf("error %q names the package", err)
		}
	}
}

func TestNewAcceptsGoodConfig(t *testing.T) {
	tls := &tls.Config{MinVersion: tls.VersionTLS13}
	for _, cfg := range []Config{
		{Protocol: GRPC, Endpoint: endpointOf("https://collector:4317", GRPC)},
		{Protocol: GRPC, Endpoint: endpointOf("127.0.0.1:4317", GRPC), Gzip: true, UserAgent: "ua", Headers: map[string]string{"a": "b"}},
		{Protocol: GRPC, Endpoint: endpointOf("https://[::1]:4317", GRPC), TLS: tls},
		{Protocol: HTTPProtobuf, Endpoint: endpointOf("https://collector:4318/v1/logs", HTTPProtobuf), TLS: tls},
		{Protocol: HTTPProtobuf, Endpoint: endpointOf("http://127.0.0.1:4318/custom/path", HTTPProtobuf), Gzip: true},
	} {
		c, err := New(cfg)
		if err != nil {
			t.Errorf("New(%+v): %v", cfg, err)
			continue
		}
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

func TestDefaultTimeout(t *testing.T) {
	c, err := New(Config{Protocol: GRPC, Endpoint: endpointOf("127.0.0.1:1", GRPC)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if got := c.(*grpcClient).bounds; got != (bounds{DefaultTimeout, DefaultRetryElapsed}) {
		t.Errorf("timeout %v", got)
	}
	h, err := New(Config{Protocol: HTTPProtobuf, Endpoint: endpointOf("http://127.0.0.1:1/v1/logs", HTTPProtobuf), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if got := h.(*httpClient).bounds; got != (bounds{time.Second, DefaultRetryElapsed}) {
		t.Errorf("timeout %v", got)
	}
}

func TestTLSConfig(t *testing.T) {
	if c := tlsConfig(nil); c.MinVersion != tls.VersionTLS12 || c.RootCAs != nil {
		t.Errorf("default %+v", c)
	}
	given := &tls.Config{ServerName: "x"}
	if c := tlsConfig(given); c == given || c.ServerName != "x" {
		t.Error("not a clone")
	}
}

func TestSecretsOf(t *testing.T) {
	cfg := Config{
		Protocol: HTTPProtobuf,
		Headers: map[string]string{"Authorization": "Bearer tokenvalue", "x-key": " k ", "empty": "",
			"X-Scope-OrgID": "0", "VL-Stream-Fields": "rank,host",
			// At minSecretPart and one short of it: a value, a credential after a scheme.
			"X-Tenant": "acme", "X-Team": "ops", "Proxy-Authorization": "Basic abcd", "X-Auth-Token": "Token abc"},
	}
	got := secretsOf(cfg)
	for _, want := range []string{"Bearer tokenvalue", "tokenvalue", "k", "rank,host", "acme", "abcd"} {
		if !slices.Contains(got, want) {
			t.Errorf("secrets %q lack %q", got, want)
		}
	}
	// A short value of a header that is no credential would be redacted
	// wherever it appears: "0" in every number of a collector's message.
	for _, short := range []string{"0", "ops", "abc"} {
		if slices.Contains(got, short) {
			t.Errorf("secrets %q hold %q, shorter than minSecretPart", got, short)
		}
	}
	if slices.Contains(got, "") {
		t.Errorf("secrets %q hold an empty one", got)
	}
	if got[0] != "Bearer tokenvalue" {
		t.Errorf("secrets %q are not longest first", got)
	}
}

func TestModeString(t *testing.T) {
	if Normal.String() != "normal" || Final.String() != "final" || Mode(7).String() != "Mode(7)" {
		t.Error(Normal, Final, Mode(7))
	}
}
