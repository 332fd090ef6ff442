package zaplens

import (
	"context"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/transport"
)

func TestInsecureVariablesOnlyForSchemeLess(t *testing.T) {
	for _, tc := range []struct {
		endpoint, insecureEnv string
		option                bool
		tls                   bool
	}{
		{"https://c:4317", "true", false, true},
		{"c:4317", "true", false, false},
		{"c:4317", "false", false, true},
		{"c:4317", "", false, true},
		{"http://c:4317", "false", false, false},
		{"https://c:4317", "", true, false}, // WithInsecure wins over the scheme
	} {
		cleanEnv(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint)
		t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", tc.insecureEnv)
		var c providerConfig
		if tc.option {
			WithInsecure().applyProvider(&c)
		}
		if err := c.resolveEnv(); err != nil {
			t.Fatal(err)
		}
		if got, err := c.target(); err != nil || got.TLS != tc.tls {
			t.Errorf("%+v: got %+v, %v", tc, got, err)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := parseHeaders("K", "Authorization=Bearer%20abc==, x-team = ml ", "grpc")
	if err != nil || h["authorization"] != "Bearer abc==" || h["x-team"] != "ml" {
		t.Errorf("got %v, %v", h, err)
	}
	for _, bad := range []string{"Authorization: Bearer s3cret", "a=b,s3cret", "k=%zzs3cret", "bad key=s3cret"} {
		_, err := parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", bad, "grpc")
		if err == nil {
			t.Errorf("%q: no error", bad)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: message shows the value: %v", bad, err)
		}
	}
}

// checkNoop asserts p is a working no-op provider.
func checkNoop(t *testing.T, p *LoggerProvider) {
	t.Helper()
	if p == nil {
		t.Fatal("nil provider")
	}
	emit(p, 10)
	if p.Logger("x").Enabled(context.Background(), logEnabledInfo) {
		t.Error("no-op provider's logger is enabled")
	}
	if s := p.Stats(); s != (Stats{}) {
		t.Errorf("no-op stats %v", s)
	}
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Error(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestOptionsOverrideEnv(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_BLRP_MAX_QUEUE_SIZE", "bad")         // an option replaces it: not read
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "grpc://x") // idem
	t.Setenv("OTEL_SDK_DISABLED", "true")
	t.Setenv("OTEL_LOGS_EXPORTER", "none")
	exp := &memExporter{block: make(chan struct{})}
	p, err := NewLoggerProvider(context.Background(), WithQueueSize(64), WithEndpoint("localhost:4317"),
		WithDisabled(false), WithExporterName("otlp"), withExporter(exp), WithLossWriter(nil))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 100)
	close(exp.block)
	_ = p.Shutdown(context.Background())
	if s := p.Stats(); s.Emitted != 100 || s.Exported != 64 || s.Dropped != 36 {
		t.Errorf("queue of 64 from the option, want drops: %v", s)
	}
}

func TestEnvBatchSettings(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_BLRP_MAX_QUEUE_SIZE", "100")
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "20")
	t.Setenv("OTEL_BLRP_EXPORT_TIMEOUT", "1500")
	var c providerConfig
	if err := c.resolveEnv(); err != nil {
		t.Fatal(err)
	}
	// The default batch shrinks to a quarter of the queue from the
	// environment, so that the queue is sent before it fills.
	if c.queueSize.value != 100 || c.batchSize.value != 25 || c.scheduleDelay.value != 20*time.Millisecond ||
		c.exportTimeout.value != 1500*time.Millisecond || c.otlpTimeout.value != DefaultOTLPTimeout {
		t.Errorf("resolved %+v", c)
	}
	// A full batch goes at once, with no wait for the delay (an hour
	// here), and no request holds more than a batch.
	t.Setenv("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", "10")
	t.Setenv("OTEL_BLRP_SCHEDULE_DELAY", "3600000")
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp))
	emit(p, 25)
	deadline := time.Now().Add(5 * time.Second)
	for p.Stats().Exported < 20 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if s := p.Stats(); s.Exported < 20 {
		t.Errorf("stats %v: full batches waited for the delay", s)
	}
	_ = p.Shutdown(context.Background())
	exp.mu.Lock()
	defer exp.mu.Unlock()
	if len(exp.records) != 25 || slices.Max(exp.batches) > 10 {
		t.Errorf("%d records in requests of %v, want 25 in batches of at most 10", len(exp.records), exp.batches)
	}
}

func TestDisabledAndNone(t *testing.T) {
	for _, kv := range [][2]string{{"OTEL_SDK_DISABLED", "true"}, {"OTEL_SDK_DISABLED", "TRUE"}, {"OTEL_LOGS_EXPORTER", "none"}} {
		t.Run(kv[0]+"="+kv[1], func(t *testing.T) {
			cleanEnv(t)
			t.Setenv(kv[0], kv[1])
			p, err := NewLoggerProvider(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkNoop(t, p)
		})
	}
}

func TestConsoleExporter(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_LOGS_EXPORTER", "console")
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), WithConsoleWriter(&buf), WithLossWriter(nil))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 3)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"step done"`); n != 3 {
		t.Errorf("console output has %d records: %s", n, buf.String())
	}
	if s := p.Stats(); s.Exported != 3 {
		t.Errorf("stats %v", s)
	}
}

func TestAttributeValueLengthLimit(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT", "2")
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp))
	emit(p, 1)
	_ = p.Shutdown(context.Background())
	var phase string
	for _, kv := range exp.records[0].Attributes {
		if kv.Key == "phase" {
			phase = kv.Value.GetStringValue()
		}
	}
	if phase != "tr" {
		t.Errorf("phase = %q, want it cut to 2", phase)
	}
	// The option wins over the variable.
	exp = &memExporter{}
	p = newTestProvider(t, withExporter(exp), WithAttributeValueLengthLimit(3), WithAttributeCountLimit(2))
	emit(p, 1)
	_ = p.Shutdown(context.Background())
	if r := exp.records[0]; len(r.Attributes) != 2 || r.DroppedAttributesCount != 2 {
		t.Errorf("count limit 2: %d kept, %d dropped", len(r.Attributes), r.DroppedAttributesCount)
	}
}

// Settings a provider does not use are not read: a leftover bad value in
// one must not turn it off.
func TestUnusedSettingsNotRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		opts []ProviderOption
	}{
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_BLRP_MAX_QUEUE_SIZE": "x", "OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://x"}, nil},
		{"none", map[string]string{"OTEL_LOGS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_HEADERS": "bad"}, nil},
		{"console", map[string]string{"OTEL_LOGS_EXPORTER": "console", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, []ProviderOption{WithConsoleWriter(io.Discard)}},
		{"custom exporter", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent"}, []ProviderOption{withExporter(&memExporter{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			p, err := NewLoggerProvider(context.Background(), append(tc.opts, WithLossWriter(nil))...)
			if err != nil {
				t.Errorf("error %v", err)
			}
			_ = p.Shutdown(context.Background())
		})
	}
}

// No input makes the parsers panic, and no error quotes a header value or
// the user info of an endpoint.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"a=b", "Authorization=Bearer%20tok", "k=%zz", "bad key=v", ",,", "=v", "a=b,c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := parseHeaders("K", s, "grpc")
		if err == nil {
			return
		}
		for pair := range strings.SplitSeq(s, ",") {
			if _, v, ok := strings.Cut(pair, "="); ok && len(v) >= 6 && strings.Contains(err.Error(), v) {
				t.Errorf("error %q quotes value %q", err, v)
			}
		}
	})
}

// A timeout of zero (none at all) and a batch larger than the queue are
// refused: from the environment, ignored with a warning; from options, the
// provider ships nothing.
func TestBoundsOnTimeoutAndQueue(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "0")
	var c providerConfig
	if err := c.resolveEnv(); err != nil || c.otlpTimeout.value != DefaultOTLPTimeout || !strings.Contains(strings.Join(c.warnings, "\n"), "OTEL_EXPORTER_OTLP_TIMEOUT=0: must be at least 1") {
		t.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT=0: timeout %v, error %v, warnings %q", c.otlpTimeout.value, err, c.warnings)
	}
	cleanEnv(t)
	t.Setenv("OTEL_BLRP_MAX_QUEUE_SIZE", "100")
	t.Setenv("OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", "1000")
	c = providerConfig{}
	if err := c.resolveEnv(); err != nil || c.batchSize.value != 25 || !strings.Contains(strings.Join(c.warnings, "\n"), "larger than queue size 100 (OTEL_BLRP_MAX_QUEUE_SIZE") {
		t.Errorf("a batch larger than the queue: batch %d, error %v, warnings %q", c.batchSize.value, err, c.warnings)
	}
	cleanEnv(t)
	p, err := NewLoggerProvider(context.Background(), WithLossWriter(nil), WithQueueSize(100), WithBatchSize(1000))
	if err == nil || !strings.Contains(err.Error(), "larger than queue size 100") {
		t.Errorf("options: a batch larger than the queue: %v", err)
	}
	if err := p.Shutdown(context.Background()); err == nil {
		t.Error("Shutdown of a provider that could not ship returned nil")
	}
}

// A header given twice in two cases is refused from the environment as it
// is from WithHeaders.
func TestEnvHeadersTwiceInTwoCases(t *testing.T) {
	if _, err := parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", "Api-Key=a,api-key=b", "grpc"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("err %v, want the key refused as given twice", err)
	}
	h, err := parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", "Api-Key=a", "grpc")
	if err != nil || h["api-key"] != "a" {
		t.Errorf("headers %v, %v", h, err)
	}
}

// The URL each endpoint setting sends to, and what transport.New makes of
// it: over OTLP/HTTP the generic variable is a base to which /v1/logs is
// added, the logs variable is used as given, and an option's URL gets
// /v1/logs only when it has no path.
func TestTargetSendsTo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		opts     []ProviderOption
		endpoint string // what the transport is given
		display  string
		tls      bool
		host     string
		port     int
	}{
		{"grpc default", nil, nil, "localhost:4317", "http://localhost:4317", false, "localhost", 4317},
		{"http default", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, nil,
			"http://localhost:4318/v1/logs", "http://localhost:4318", false, "localhost", 4318},
		{"http generic base", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c"}, nil,
			"https://c:443/v1/logs", "https://c:443", true, "c", 443},
		{"http generic base with a slash", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:9/"}, nil,
			"http://c:9/v1/logs", "http://c:9", false, "c", 9},
		{"http generic base with a path", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:9/otlp/"}, nil,
			"http://c:9/otlp/v1/logs", "http://c:9", false, "c", 9},
		{"http logs variable as given", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://c:9/ingest%2Flogs"}, nil,
			"http://c:9/ingest%2Flogs", "http://c:9", false, "c", 9},
		{"http logs variable without a path", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "c:9"}, nil,
			"https://c:9/", "https://c:9", true, "c", 9},
		{"http option without a path", nil, []ProviderOption{WithProtocol("http/protobuf"), WithEndpoint("http://[::1]")},
			"http://[::1]:80/v1/logs", "http://[::1]:80", false, "::1", 80},
		{"http option with a path", nil, []ProviderOption{WithProtocol("http/protobuf"), WithEndpoint("http://c:9/x")},
			"http://c:9/x", "http://c:9", false, "c", 9},
		{"http WithInsecure over https", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, []ProviderOption{WithEndpoint("https://c:9"), WithInsecure()},
			"http://c:9/v1/logs", "http://c:9", false, "c", 9},
		{"http zoned address", nil, []ProviderOption{WithProtocol("http/protobuf"), WithEndpoint("http://[fe80::1%25eth0]:9")},
			"http://[fe80::1%25eth0]:9/v1/logs", "http://[fe80::1%25eth0]:9", false, "fe80::1%eth0", 9},
		{"grpc zoned address", nil, []ProviderOption{WithEndpoint("[fe80::1%25eth0]:9"), WithInsecure()},
			"[fe80::1%25eth0]:9", "http://[fe80::1%25eth0]:9", false, "fe80::1%eth0", 9},
		{"grpc path dropped", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:9/v1/logs"}, nil,
			"c:9", "https://c:9", true, "c", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c := newProviderConfig(tc.opts)
			if err := c.resolveEnv(); err != nil {
				t.Fatal(err)
			}
			got, err := c.target()
			if err != nil {
				t.Fatal(err)
			}
			sentTo := got.HostPort() // gRPC: no path
			if got.protocol == transport.HTTPProtobuf {
				sentTo = got.display + got.Path
			}
			if sentTo != tc.endpoint || got.display != tc.display || got.TLS != tc.tls || got.Host != tc.host || got.Port != tc.port {
				t.Errorf("target %+v, want endpoint %q, display %q, tls %v, host %q, port %d", got, tc.endpoint, tc.display, tc.tls, tc.host, tc.port)
			}
			client, err := transport.New(transport.Config{Protocol: got.protocol, Endpoint: got.Endpoint})
			if err != nil {
				t.Fatalf("the transport refuses the endpoint: %v", err)
			}
			_ = client.Close(context.Background())
		})
	}
}

// Headers and resource attributes are read by one parser, whose errors
// name the variable, the pair's position and key, never a value; only a
// blank value differs: no headers, but a resource pair without "=", which
// the SDK would refuse with a message quoting the pairs.
func TestParsePairs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{"", map[string]string{}, ""},
		{"a=1, b = x%20y ,c=", map[string]string{"a": "1", "b": "x y", "c": ""}, ""},
		{"=s3cret", nil, "V: pair 1 is not key=value"},
		{"a=1,,b=2", nil, "V: pair 2 is not key=value"},
		{"a=1,s3cret", nil, "V: pair 2 is not key=value"},
		{"a=1, k =%zzs3cret", nil, `V: pair 2 ("k"): bad percent-encoding`},
	} {
		got, err := parsePairs("V", tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%q: error %v, want %q without the value", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
	cleanEnv(t)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", " ")
	var c providerConfig
	if err := c.checkResourceEnv(); err == nil || !strings.Contains(err.Error(), "OTEL_RESOURCE_ATTRIBUTES: pair 1") || !c.skipResourceEnv {
		t.Errorf("blank resource attributes: %v", err)
	}
	if h, err := parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", " ", "grpc"); err != nil || len(h) != 0 {
		t.Errorf("blank headers: %v, %v", h, err)
	}
}
