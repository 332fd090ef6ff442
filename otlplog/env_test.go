package otlplog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
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
	exp := &memExporter{Block: make(chan struct{})}
	p, err := NewLoggerProvider(context.Background(), WithQueueSize(64), WithEndpoint("localhost:4317"),
		WithDisabled(false), WithExporterName("otlp"), withExporter(exp), WithLossWriter(nil))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 100)
	close(exp.Block)
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
	exp.Mu.Lock()
	defer exp.Mu.Unlock()
	if len(exp.Records) != 25 || slices.Max(exp.Batches) > 10 {
		t.Errorf("%d records in requests of %v, want 25 in batches of at most 10", len(exp.Records), exp.Batches)
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
	for _, kv := range exp.Records[0].Attributes {
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
	if r := exp.Records[0]; len(r.Attributes) != 2 || r.DroppedAttributesCount != 2 {
		t.Errorf("count limit 2: %d kept, %d dropped", len(r.Attributes), r.DroppedAttributesCount)
	}
}

// Settings a provider does not use are not read: a leftover bad value in
// one must not turn it off.
func TestUnusedSettingsNotRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		opts []Option
	}{
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_BLRP_MAX_QUEUE_SIZE": "x", "OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://x"}, nil},
		{"none", map[string]string{"OTEL_LOGS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_HEADERS": "bad"}, nil},
		{"console", map[string]string{"OTEL_LOGS_EXPORTER": "console", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, []Option{WithConsoleWriter(io.Discard)}},
		{"custom exporter", map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent"}, []Option{withExporter(&memExporter{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
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
		// Keys may be quoted, and a key may hold a value's text
		// ("000000!=000000"): what counts is the message without them.
		msg := err.Error()
		for pair := range strings.SplitSeq(s, ",") {
			if k, _, ok := strings.Cut(pair, "="); ok && strings.TrimSpace(k) != "" {
				k = strings.TrimSpace(k)
				q := strconv.Quote(k) // as printable quotes it
				msg = strings.ReplaceAll(strings.ReplaceAll(msg, q[1:len(q)-1], ""), k, "")
			}
		}
		for pair := range strings.SplitSeq(s, ",") {
			if _, v, ok := strings.Cut(pair, "="); ok && len(v) >= 6 && strings.Contains(msg, v) {
				t.Errorf("error %q quotes value %q", err, v)
			}
		}
	})
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
		opts     []Option
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
		{"http option without a path", nil, []Option{WithProtocol("http/protobuf"), WithEndpoint("http://[::1]")},
			"http://[::1]:80/v1/logs", "http://[::1]:80", false, "::1", 80},
		{"http option with a path", nil, []Option{WithProtocol("http/protobuf"), WithEndpoint("http://c:9/x")},
			"http://c:9/x", "http://c:9", false, "c", 9},
		{"http WithInsecure over https", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, []Option{WithEndpoint("https://c:9"), WithInsecure()},
			"http://c:9/v1/logs", "http://c:9", false, "c", 9},
		{"http zoned address", nil, []Option{WithProtocol("http/protobuf"), WithEndpoint("http://[fe80::1%25eth0]:9")},
			"http://[fe80::1%25eth0]:9/v1/logs", "http://[fe80::1%25eth0]:9", false, "fe80::1%eth0", 9},
		{"grpc zoned address", nil, []Option{WithEndpoint("[fe80::1%25eth0]:9"), WithInsecure()},
			"[fe80::1%25eth0]:9", "http://[fe80::1%25eth0]:9", false, "fe80::1%eth0", 9},
		{"grpc path dropped", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:9/v1/logs"}, nil,
			"c:9", "https://c:9", true, "c", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
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

// A blank value differs between the two key=value lists (the table of
// their one parser is confval's TestParsePairs): no headers, but a
// resource pair without "=", which the SDK would refuse with a message
// quoting the pairs: the variable is ignored, and its attributes left out.
func TestBlankPairs(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", " ")
	var c providerConfig
	if err := c.readStep(stepResource); err == nil || !strings.Contains(err.Error(), "OTEL_RESOURCE_ATTRIBUTES: pair 1") || c.resourceEnv.set {
		t.Errorf("blank resource attributes: %v, %+v", err, c.resourceEnv)
	}
	if h, err := parseHeaders("OTEL_EXPORTER_OTLP_HEADERS", " ", "grpc"); err != nil || len(h) != 0 {
		t.Errorf("blank headers: %v, %v", h, err)
	}
}

// said quotes a string, not a number; a variable as VAR=value, an option
// or a file's key as a call, and an option that does not name itself
// without a name it does not have.
func TestSaid(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{said(&setting[string]{value: " x", env: true, from: "V"}), `V=" x"`},
		{said(&setting[int]{value: 5, env: true, from: "V"}), `V=5`},
		{said(&setting[string]{value: "x", from: "WithX"}), `WithX("x")`},
		{said(&setting[time.Duration]{value: -time.Second, from: "WithX"}), `WithX(-1s)`},
		{said(&setting[int]{value: -1, from: "a.b"}), `a.b(-1)`},
	} {
		if tc.got != tc.want {
			t.Errorf("said %s, want %s", tc.got, tc.want)
		}
	}
}

// Where a value came from decides what a bad one does, by one rule: a
// variable's is treated as not set, with a warning, and the default is
// kept; an option's or the configuration file's makes shipping impossible,
// and the message names the option or the file's key, never a variable
// nobody set. Each case pins what was resolved unlike the defaults, then
// the error and the warnings, in order.
func TestBadValueBySource(t *testing.T) {
	defaults, _ := resolveForTest(t, nil, nil)
	if got, want := strings.Join(defaults, ", "), "exporter otlp, disabled false, queue 0 false, batch 8192 false, queue bytes 25165824, "+
		"delay 1s, count -1 false, protocol grpc, compression \"\", timeout 10s, headers map[], endpoint http://localhost:4317, "+
		"to http://localhost:4317, tls false, headers sent map[]"; got != want {
		t.Errorf("defaults\n%s\nwant\n%s", got, want)
	}
	h := func(kv ...string) Option { return WithHeaders(map[string]string{kv[0]: kv[1]}) }
	// file writes a configuration file of one batch processor with the
	// settings batch, an OTLP/gRPC exporter with grpc's and to
	// https://c:1, and logger_provider.limits of limits (each a YAML flow
	// mapping's entries, the first two ending in a comma), and returns its
	// path, which messages show as FILE.
	file := func(batch, grpc, limits string) string {
		f, err := os.CreateTemp(t.TempDir(), "*.yaml")
		if err == nil {
			_, err = fmt.Fprintf(f, `{file_format: "1.0-rc.2", logger_provider: {processors: [{batch: {%s exporter: {otlp_grpc: {%s endpoint: "https://c:1"}}}}], limits: {%s}}}`, batch, grpc, limits)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	type env = map[string]string
	type opts = []Option
	for _, tc := range []struct {
		name string
		env  env
		opts opts
		want []string
	}{
		{"compression option", nil, opts{WithCompression("zstd")}, []string{`error: WithCompression("zstd"): want gzip or none`}},
		{"compression variable", env{"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION": "zstd", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, nil, []string{`warning: OTEL_EXPORTER_OTLP_LOGS_COMPRESSION="zstd": want gzip or none; ignored, as if not set`}},
		{"exporter variable", env{"OTEL_LOGS_EXPORTER": " Kafka "}, nil, []string{`warning: OTEL_LOGS_EXPORTER=" Kafka ": want otlp, console or none (one only); ignored, as if not set`}},
		{"exporter variable in another case", env{"OTEL_LOGS_EXPORTER": " CONSOLE "}, nil, []string{`exporter console`}},
		{"protocol option", nil, opts{WithProtocol(" grpc")}, []string{`error: WithProtocol(" grpc"): want grpc or http/protobuf`}},
		{"protocol option http/json", nil, opts{WithProtocol("http/json")}, []string{`error: WithProtocol("http/json"): not supported; use grpc or http/protobuf, which every collector accepts`}},
		{"protocol variable trimmed", env{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": " http/protobuf "}, nil, []string{
			`protocol http/protobuf`,
			`endpoint http://localhost:4318`,
			`to http://localhost:4318/v1/logs`,
		}},
		{"protocol variable blank", env{"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": " ", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, nil, nil},
		{"queue bytes option", nil, opts{WithQueueBytes(100)}, []string{
			`queue bytes 100`,
			`error: WithQueueBytes(100): must be at least 1024`,
		}},
		{"queue bytes variable", env{"ZAPLENS_QUEUE_BYTES": " 100"}, nil, []string{`warning: ZAPLENS_QUEUE_BYTES=100: must be at least 1024; ignored, as if not set`}},
		{"queue bytes variable blank", env{"ZAPLENS_QUEUE_BYTES": " "}, nil, []string{`warning: ZAPLENS_QUEUE_BYTES=" ": not an integer; ignored, as if not set`}},
		{"timeout option zero", nil, opts{WithOTLPTimeout(0)}, []string{`error: WithOTLPTimeout(0s): must be at least 1ms`}},
		{"export timeout option negative", nil, opts{WithExportTimeout(-time.Second)}, []string{`error: WithExportTimeout(-1s): must be at least 1ms`}},
		{"timeout option under a millisecond", nil, opts{WithOTLPTimeout(time.Microsecond)}, []string{`timeout 1µs`}},
		{"timeout variable overflows", env{"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT": "+99999999999999 ", "OTEL_EXPORTER_OTLP_TIMEOUT": "500"}, nil, []string{`warning: OTEL_EXPORTER_OTLP_LOGS_TIMEOUT=+99999999999999: more milliseconds than a duration holds; ignored, as if not set`}},
		{"timeout variable", env{"OTEL_EXPORTER_OTLP_TIMEOUT": "500"}, nil, []string{`timeout 500ms`}},
		{"queue variable beyond 64 bits", env{"OTEL_BLRP_MAX_QUEUE_SIZE": "99999999999999999999"}, nil, []string{"warning: OTEL_BLRP_MAX_QUEUE_SIZE=99999999999999999999: more than " + strconv.Itoa(math.MaxInt) + "; ignored, as if not set"}},
		{"queue variable below 64 bits", env{"OTEL_BLRP_MAX_QUEUE_SIZE": " -99999999999999999999"}, nil, []string{`warning: OTEL_BLRP_MAX_QUEUE_SIZE=-99999999999999999999: must be at least 1; ignored, as if not set`}},
		{"timeout variable zero", env{"OTEL_EXPORTER_OTLP_TIMEOUT": "0"}, nil, []string{`warning: OTEL_EXPORTER_OTLP_TIMEOUT=0: must be at least 1; ignored, as if not set`}},
		{"batch option over queue variable", env{"OTEL_BLRP_MAX_QUEUE_SIZE": "100"}, opts{WithBatchSize(1000)}, []string{
			`batch 1000 true`,
			`warning: batch size 1000 (WithBatchSize) is larger than queue size 100 (OTEL_BLRP_MAX_QUEUE_SIZE or WithQueueSize); ignored, as if not set`,
		}},
		{"batch variable over queue option", env{"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE": "1000"}, opts{WithQueueSize(100)}, []string{
			`queue 100 true`,
			`batch 25 false`,
			`warning: batch size 1000 (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE or WithBatchSize) is larger than queue size 100 (WithQueueSize); ignored, as if not set`,
		}},
		{"batch and queue options", nil, opts{WithBatchSize(1000), WithQueueSize(100)}, []string{
			`queue 100 true`,
			`batch 1000 true`,
			`error: batch size 1000 (WithBatchSize) is larger than queue size 100 (WithQueueSize)`,
		}},
		{"batch and queue variables", env{"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE": "1000", "OTEL_BLRP_MAX_QUEUE_SIZE": "100"}, nil, []string{
			`queue 100 true`,
			`batch 25 false`,
			`warning: batch size 1000 (OTEL_BLRP_MAX_EXPORT_BATCH_SIZE or WithBatchSize) is larger than queue size 100 (OTEL_BLRP_MAX_QUEUE_SIZE or WithQueueSize); ignored, as if not set`,
		}},
		{"queue option", nil, opts{WithQueueSize(100)}, []string{
			`queue 100 true`,
			`batch 25 false`,
		}},
		{"headers option", nil, opts{h("Bad Key", "s3cret"), WithEndpoint("http://c:1")}, []string{`error: WithHeaders: header key "Bad Key" is not valid for grpc (lowercase letters, digits, '-', '_' and '.', not starting with grpc-)`}},
		{"headers option in two cases", nil, opts{WithHeaders(map[string]string{"K": "a", "k": "b"}), WithEndpoint("https://c:1")}, []string{`error: WithHeaders: header "k" is given twice, in different cases`}},
		{"headers variable", env{"OTEL_EXPORTER_OTLP_HEADERS": "a", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:1"}, nil, []string{
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
			`warning: OTEL_EXPORTER_OTLP_HEADERS: pair 1 is not key=value (value not shown); ignored, as if not set`,
		}},
		{"headers variable blank", env{"OTEL_EXPORTER_OTLP_LOGS_HEADERS": " ", "OTEL_EXPORTER_OTLP_HEADERS": "k=v", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:1"}, nil, []string{
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
		}},
		{"headers variable for http", env{"OTEL_EXPORTER_OTLP_HEADERS": "K=v", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, nil, []string{
			`protocol http/protobuf`,
			`headers map[k:v]`,
			`endpoint https://c:1`,
			`to https://c:1/v1/logs`,
			`tls true`,
			`headers sent map[k:v]`,
		}},
		{"headers option, default endpoint", nil, opts{h("k", "v")}, []string{
			`headers map[k:v]`,
			`error: WithHeaders is set but no endpoint is: headers are not sent in plaintext to the default endpoint, which any local user can listen on; set OTEL_EXPORTER_OTLP_ENDPOINT (https://... for TLS)`,
		}},
		{"headers variable, default endpoint", env{"OTEL_EXPORTER_OTLP_LOGS_HEADERS": "k=v"}, nil, []string{
			`headers map[k:v]`,
			`warning: OTEL_EXPORTER_OTLP_LOGS_HEADERS is set but no endpoint is: headers are not sent in plaintext to the default endpoint, which any local user can listen on; set OTEL_EXPORTER_OTLP_ENDPOINT (https://... for TLS); ignored, as if not set`,
		}},
		// A warning where plaintext matters: credential-like names, to another host.
		{"headers variable, plaintext endpoint", env{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=v,x-team=ml,X-API-Key=v", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://c:1"}, nil, []string{
			`headers map[authorization:v x-api-key:v x-team:ml]`,
			`endpoint http://c:1`,
			`to http://c:1`,
			`headers sent map[authorization:v x-api-key:v x-team:ml]`,
			`warning: the headers of OTEL_EXPORTER_OTLP_HEADERS ("authorization", "x-api-key") travel in plaintext to the endpoint of OTEL_EXPORTER_OTLP_LOGS_ENDPOINT; use https:// to encrypt them`,
		}},
		{"headers option, plaintext endpoint variable", env{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:1", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, opts{h("dd-api-key", "v")}, []string{
			`headers map[dd-api-key:v]`,
			`endpoint c:1`,
			`to http://c:1`,
			`headers sent map[dd-api-key:v]`,
			`warning: the headers of WithHeaders ("dd-api-key") travel in plaintext to the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT; use https:// to encrypt them`,
		}},
		{"headers no secret, plaintext endpoint", env{"OTEL_EXPORTER_OTLP_HEADERS": "VL-Stream-Fields=service.name", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:1"}, nil, []string{
			`headers map[vl-stream-fields:service.name]`,
			`endpoint http://c:1`,
			`to http://c:1`,
			`headers sent map[vl-stream-fields:service.name]`,
		}},
		{"headers to a loopback endpoint", env{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=v", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.2:1"}, opts{WithEndpoint("http://[::1]:1")}, []string{
			`headers map[authorization:v]`,
			`endpoint http://[::1]:1`,
			`to http://[::1]:1`,
			`headers sent map[authorization:v]`,
		}},
		{"endpoint variables, the first bad", env{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "grpc://x", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:9"}, nil, []string{
			`endpoint http://c:9`,
			`to http://c:9`,
			`warning: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: endpoint "grpc://x": scheme "grpc", want http, https or none; ignored, as if not set`,
		}},
		{"endpoint variables, both bad", env{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "grpc://x", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, nil, []string{
			`protocol http/protobuf`,
			`endpoint http://localhost:4318`,
			`to http://localhost:4318/v1/logs`,
			`warning: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: endpoint "grpc://x": scheme "grpc", want http, https or none; ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_ENDPOINT: endpoint "https://:1": no host; ignored, as if not set`,
		}},
		{"endpoint option", nil, opts{WithEndpoint("grpc://x")}, []string{
			`endpoint grpc://x`,
			`error: WithEndpoint: endpoint "grpc://x": scheme "grpc", want http, https or none`,
		}},
		{"insecure variable", env{"OTEL_EXPORTER_OTLP_INSECURE": "yes", "OTEL_EXPORTER_OTLP_ENDPOINT": "c:1"}, nil, []string{
			`endpoint c:1`,
			`to https://c:1`,
			`tls true`,
			`warning: OTEL_EXPORTER_OTLP_INSECURE="yes": want true or false; ignored, as if not set`,
		}},
		{"insecure variable, scheme-less", env{"OTEL_EXPORTER_OTLP_LOGS_INSECURE": " TRUE ", "OTEL_EXPORTER_OTLP_ENDPOINT": "c:1"}, nil, []string{
			`endpoint c:1`,
			`to http://c:1`,
		}},
		{"insecure variable, https", env{"OTEL_EXPORTER_OTLP_INSECURE": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:1"}, nil, []string{
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
		}},
		{"insecure option, https variable", env{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:1"}, opts{WithInsecure()}, []string{
			`endpoint https://c:1`,
			`to http://c:1`,
			`warning: WithInsecure turns TLS off for the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT, which asks for it`,
		}},
		{"insecure option, https option", nil, opts{WithInsecure(), WithEndpoint("https://c:1")}, []string{
			`endpoint https://c:1`,
			`to http://c:1`,
		}},
		{"file count limit", env{"OTEL_CONFIG_FILE": file("", "", "attribute_count_limit: -1")}, nil, []string{
			`count -1 true`,
			`error: OTEL_CONFIG_FILE's logger_provider.limits.attribute_count_limit(-1): must be at least 0`,
		}},
		{"file count limit, option", env{"OTEL_CONFIG_FILE": file("", "", "attribute_count_limit: -1")}, opts{WithAttributeCountLimit(5)}, []string{
			`count 5 true`,
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
		}},
		{"file batch over queue", env{"OTEL_CONFIG_FILE": file("max_queue_size: 100, max_export_batch_size: 1000,", "", "")}, nil, []string{
			`queue 100 true`,
			`batch 1000 true`,
			`error: batch size 1000 (OTEL_CONFIG_FILE's logger_provider.processors[0].batch.max_export_batch_size) is larger than queue size 100 (OTEL_CONFIG_FILE's logger_provider.processors[0].batch.max_queue_size)`,
		}},
		// The file replaces the SDK's variables, as the declarative-configuration
		// spec says: a header meant for another endpoint is not sent to the file's.
		{"file replaces variables", env{"OTEL_CONFIG_FILE": file("max_export_batch_size: 1000,", "", ""), "OTEL_BLRP_MAX_QUEUE_SIZE": "100",
			"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20other", "OTEL_EXPORTER_OTLP_LOGS_COMPRESSION": "gzip", "ZAPLENS_QUEUE_BYTES": "2048",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "k=v", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:1"}, nil, []string{
			`batch 1000 true`,
			`queue bytes 2048`,
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
			`warning: OTEL_CONFIG_FILE replaces OTEL_BLRP_MAX_QUEUE_SIZE, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_LOGS_COMPRESSION: not read (the file may read a variable as ${NAME})`,
		}},
		{"file batch over queue option", env{"OTEL_CONFIG_FILE": file("max_export_batch_size: 1000,", "", "")}, opts{WithQueueSize(100)}, []string{
			`queue 100 true`,
			`batch 1000 true`,
			`error: batch size 1000 (OTEL_CONFIG_FILE's logger_provider.processors[0].batch.max_export_batch_size) is larger than queue size 100 (WithQueueSize)`,
		}},
		{"file timeout", env{"OTEL_CONFIG_FILE": file("schedule_delay: 20,", "timeout: 500,", ""), "OTEL_EXPORTER_OTLP_TIMEOUT": "x"}, nil, []string{
			`delay 20ms`,
			`timeout 500ms`,
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
			`warning: OTEL_CONFIG_FILE replaces OTEL_EXPORTER_OTLP_TIMEOUT: not read (the file may read a variable as ${NAME})`,
		}},
		{"file timeout overflows", env{"OTEL_CONFIG_FILE": file("", "timeout: 99999999999999,", "")}, nil, []string{
			`error: OTEL_CONFIG_FILE=FILE: logger_provider.processors[0].batch.exporter.otlp_grpc.timeout(99999999999999): more milliseconds than a duration holds`,
		}},
		// "No limit" in the file: the defaults (no delay or timeout line), each wait bounded.
		{"file durations zero", env{"OTEL_CONFIG_FILE": file("schedule_delay: 0,", "timeout: 0,", "")}, nil, []string{
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
		}},
		{"file schedule delay overflows", env{"OTEL_CONFIG_FILE": file("schedule_delay: 9223372036855,", "", "")}, nil, []string{
			`error: OTEL_CONFIG_FILE=FILE: logger_provider.processors[0].batch.schedule_delay(9223372036855): more milliseconds than a duration holds`,
		}},
		// A value of the file that an option replaces is not read: its error is not told.
		{"file compression refused", env{"OTEL_CONFIG_FILE": file("", "compression: zstd,", "")}, nil, []string{
			`error: OTEL_CONFIG_FILE=FILE: logger_provider.processors[0].batch.exporter.otlp_grpc.compression: "zstd" is not supported; want gzip or none`,
		}},
		{"file compression refused, option", env{"OTEL_CONFIG_FILE": file("", "compression: zstd,", "")}, opts{WithCompression("gzip")}, []string{
			`compression "gzip"`,
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
		}},
		{"file TLS refused, option", env{"OTEL_CONFIG_FILE": file("", "tls: {ca_file: /nonexistent},", "")}, opts{WithTLSConfig(nil)}, []string{
			`endpoint https://c:1`,
			`to https://c:1`,
			`tls true`,
		}},
		{"file TLS refused", env{"OTEL_CONFIG_FILE": file("", "tls: {ca_file: /nonexistent},", "")}, nil, []string{
			`error: OTEL_CONFIG_FILE=FILE: logger_provider.processors[0].batch.exporter.otlp_grpc.tls.ca_file: open /nonexistent: no such file or directory`,
		}},
		{"file exporter's bad values, exporter option", env{"OTEL_CONFIG_FILE": file("", `compression: zstd, tls: {ca_file: /nonexistent},`, "")}, opts{WithExporterName("console")}, []string{
			`exporter console`,
		}},
		{"file headers", env{"OTEL_CONFIG_FILE": file("", `headers_list: "Bad Key=s3cret",`, "")}, nil, []string{
			`error: OTEL_CONFIG_FILE's logger_provider.processors[0].batch.exporter.otlp_grpc.headers: header key "Bad Key" is not valid for grpc (lowercase letters, digits, '-', '_' and '.', not starting with grpc-)`,
		}},
		{"file headers, checked by the option's protocol", env{"OTEL_CONFIG_FILE": file("", `headers_list: "grpc-x=v",`, "")}, opts{WithProtocol("http/protobuf")}, []string{
			`protocol http/protobuf`,
			`headers map[grpc-x:v]`,
			`endpoint https://c:1`,
			`to https://c:1/v1/logs`,
			`tls true`,
			`headers sent map[grpc-x:v]`,
		}},
		{"disabled variable", env{"OTEL_SDK_DISABLED": "1"}, nil, []string{`warning: OTEL_SDK_DISABLED="1": want true or false; ignored, as if not set`}},
		{"disabled variable and option", env{"OTEL_SDK_DISABLED": "1"}, opts{WithDisabled(false)}, nil},
		{"count limit option", nil, opts{WithAttributeCountLimit(-1)}, []string{
			`count -1 true`,
			`error: WithAttributeCountLimit(-1): must be at least 0`,
		}},
		{"count limit variable", env{"OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT": "5"}, nil, []string{`count 5 true`}},
		{"schedule delay variable", env{"OTEL_BLRP_SCHEDULE_DELAY": "x"}, nil, []string{`warning: OTEL_BLRP_SCHEDULE_DELAY="x": not an integer (milliseconds); ignored, as if not set`}},
		{"many bad variables, told in order", env{
			"OTEL_SDK_DISABLED": "1", "OTEL_LOGS_EXPORTER": "x", "OTEL_EXPORTER_OTLP_INSECURE": "x", "OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://x",
			"OTEL_EXPORTER_OTLP_HEADERS": "x", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent", "OTEL_EXPORTER_OTLP_COMPRESSION": "x",
			"OTEL_EXPORTER_OTLP_TIMEOUT": "x", "OTEL_BLRP_MAX_QUEUE_SIZE": "x", "ZAPLENS_QUEUE_BYTES": "x", "ZAPLENS_REQUEST_BYTES": "x",
			"OTEL_BLRP_MAX_EXPORT_BATCH_SIZE": "x", "OTEL_BLRP_SCHEDULE_DELAY": "x", "OTEL_BLRP_EXPORT_TIMEOUT": "x",
			"OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT": "x", "OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT": "x", "OTEL_RESOURCE_ATTRIBUTES": "x",
		}, nil, []string{
			`warning: OTEL_SDK_DISABLED="1": want true or false; ignored, as if not set`,
			`warning: OTEL_LOGS_EXPORTER="x": want otlp, console or none (one only); ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_INSECURE="x": want true or false; ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_ENDPOINT: endpoint "grpc://x": scheme "grpc", want http, https or none; ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_HEADERS: pair 1 is not key=value (value not shown); ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_CERTIFICATE: open /nonexistent: no such file or directory; ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_COMPRESSION="x": want gzip or none; ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_TIMEOUT="x": not an integer (milliseconds); ignored, as if not set`,
			`warning: OTEL_BLRP_MAX_QUEUE_SIZE="x": not an integer; ignored, as if not set`,
			`warning: ZAPLENS_QUEUE_BYTES="x": not an integer; ignored, as if not set`,
			`warning: ZAPLENS_REQUEST_BYTES="x": not an integer; ignored, as if not set`,
			`warning: OTEL_BLRP_MAX_EXPORT_BATCH_SIZE="x": not an integer; ignored, as if not set`,
			`warning: OTEL_BLRP_SCHEDULE_DELAY="x": not an integer (milliseconds); ignored, as if not set`,
			`warning: OTEL_BLRP_EXPORT_TIMEOUT="x": not an integer (milliseconds); ignored, as if not set`,
			`warning: OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT="x": not an integer; ignored, as if not set`,
			`warning: OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT="x": not an integer; ignored, as if not set`,
			`warning: OTEL_RESOURCE_ATTRIBUTES: pair 1 is not key=value (value not shown); ignored, as if not set`,
		}},
		{"bad variables, an option's error", env{"OTEL_SDK_DISABLED": "1", "OTEL_EXPORTER_OTLP_COMPRESSION": "x"}, opts{WithQueueBytes(1)}, []string{
			`queue bytes 1`,
			`error: WithQueueBytes(1): must be at least 1024`,
			`warning: OTEL_SDK_DISABLED="1": want true or false; ignored, as if not set`,
			`warning: OTEL_EXPORTER_OTLP_COMPRESSION="x": want gzip or none; ignored, as if not set`,
		}},
		{"protocol refused, no other OTLP variable read", env{"OTEL_SDK_DISABLED": "1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_COMPRESSION": "x"}, nil, []string{
			`error: OTEL_EXPORTER_OTLP_PROTOCOL="http/json": not supported; use grpc or http/protobuf, which every collector accepts`,
			`warning: OTEL_SDK_DISABLED="1": want true or false; ignored, as if not set`,
		}},
		{"exporter option refused, nothing more read", env{"OTEL_SDK_DISABLED": "1", "OTEL_EXPORTER_OTLP_COMPRESSION": "x"}, opts{WithExporterName("kafka")}, []string{
			`exporter kafka`,
			`batch 0 false`,
			`queue bytes 0`,
			`delay 0s`,
			`count 0 false`,
			`error: WithExporterName("kafka"): want otlp, console or none`,
			`warning: OTEL_SDK_DISABLED="1": want true or false; ignored, as if not set`,
		}},
		{"console, OTLP variables not read", env{"OTEL_LOGS_EXPORTER": "console", "OTEL_EXPORTER_OTLP_COMPRESSION": "x", "OTEL_BLRP_MAX_QUEUE_SIZE": "x"}, nil, []string{
			`exporter console`,
			`warning: OTEL_BLRP_MAX_QUEUE_SIZE="x": not an integer; ignored, as if not set`,
		}},
		{"off, nothing more read", env{"OTEL_LOGS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_COMPRESSION": "x", "OTEL_BLRP_MAX_QUEUE_SIZE": "x"}, nil, []string{
			`exporter none`,
			`batch 0 false`,
			`queue bytes 0`,
			`delay 0s`,
			`count 0 false`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strconv.IntSize == 32 && (tc.name == "file timeout overflows" || tc.name == "file schedule delay overflows") {
				t.Skip("otelconf reads these keys into an int, which on 32 bits does not hold them: it refuses the file itself")
			}
			resolved, told := resolveForTest(t, tc.env, tc.opts)
			var got []string
			for i, r := range resolved {
				if r != defaults[i] {
					got = append(got, r)
				}
			}
			if f := tc.env["OTEL_CONFIG_FILE"]; f != "" {
				for i := range told {
					told[i] = strings.ReplaceAll(told[i], f, "FILE")
				}
			}
			if got = append(got, told...); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// resolveForTest resolves a configuration of opts under env, with the
// file OTEL_CONFIG_FILE names, as NewLoggerProvider does, and returns its
// settings, as far as they were resolved, and what it tells: its error,
// then its warnings.
func resolveForTest(t *testing.T, env map[string]string, opts []Option) (resolved, told []string) {
	t.Helper()
	setEnv(t, env)
	c := newProviderConfig(opts)
	if _, err := c.applyConfigFile(context.Background()); err != nil {
		return nil, []string{"error: " + err.Error()} // nothing more is resolved
	}
	err := c.resolveEnv()
	resolved = []string{"exporter " + c.exporterName.value, fmt.Sprint("disabled ", c.disabled.value),
		fmt.Sprint("queue ", c.queueSize.value, " ", c.queueSize.set), fmt.Sprint("batch ", c.batchSize.value, " ", c.batchSize.set),
		fmt.Sprint("queue bytes ", c.queueBytes.value), fmt.Sprint("delay ", c.scheduleDelay.value),
		fmt.Sprint("count ", c.attrCount.value, " ", c.attrCount.set)}
	if err == nil && !c.off() && c.exporterName.value == "otlp" {
		resolved = append(resolved, "protocol "+c.protocol.value, fmt.Sprintf("compression %q", c.compression.value),
			fmt.Sprint("timeout ", c.otlpTimeout.value), fmt.Sprint("headers ", c.headers.value), "endpoint "+c.endpoint.value)
		var tg target
		if tg, err = c.target(); err == nil {
			resolved = append(resolved, "to "+tg.display+tg.Path, fmt.Sprint("tls ", tg.TLS), fmt.Sprint("headers sent ", c.headers.value))
		}
	}
	if err != nil {
		told = append(told, "error: "+err.Error())
	}
	for _, w := range c.warnings {
		told = append(told, "warning: "+w)
	}
	return resolved, told
}
