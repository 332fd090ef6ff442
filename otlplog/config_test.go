package otlplog

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/zaplens/zaplens/internal/confval"
	"github.com/zaplens/zaplens/internal/declarative"
	// The file's parser, as a program that reads OTEL_CONFIG_FILE links
	// it: this package's tests read their files through it.
	_ "github.com/zaplens/zaplens/otlplog/configfile"
)

// The kitchen-sink example's logger_provider and resource, with its gRPC
// exporter over TLS to a real receiver: the endpoint, certificates,
// headers, compression, limits and resource of the file are what arrives.
func TestConfigFileShips(t *testing.T) {
	cleanEnv(t)
	certs := testCerts(t)
	var mu sync.Mutex
	var md metadata.MD
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords(), withServerTLS(certs.Pair),
		func(_ *otlpServer, o *[]grpc.ServerOption) {
			*o = append(*o, grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				mu.Lock()
				md, _ = metadata.FromIncomingContext(ctx)
				mu.Unlock()
				return h(ctx, req)
			}))
		})
	t.Setenv("ZAPLENS_TEST_ENDPOINT", srv.Addr)
	t.Setenv("ZAPLENS_TEST_CA", certs.CA)
	t.Setenv("ZAPLENS_TEST_CERT", certs.Cert)
	t.Setenv("ZAPLENS_TEST_KEY", certs.Key)
	t.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/logs-grpc.yaml")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1") // the file wins
	ctx := context.Background()
	p, err := NewLoggerProvider(ctx, WithLossWriter(nil))
	if err != nil {
		t.Fatal(err)
	}
	var r log.Record
	r.SetBody(attribute.StringValue("from the file"))
	r.AddAttributes(attribute.String("long", "0123456789abc"), attribute.Int("a", 1), attribute.Int("b", 2), attribute.Int("c", 3))
	rl := shipOne(t, p, srv, r)
	rec := rl.GetScopeLogs()[0].GetLogRecords()[0]
	if n := len(rec.GetAttributes()); n != 3 || rec.GetDroppedAttributesCount() != 1 {
		t.Errorf("%d attributes, %d dropped: the file's count limit (3) was not applied", n, rec.GetDroppedAttributesCount())
	}
	if v := rec.GetAttributes()[0].GetValue().GetStringValue(); v != "01234567" {
		t.Errorf("long = %q: the file's value length limit (8) was not applied", v)
	}
	res := map[string]string{}
	for _, kv := range rl.GetResource().GetAttributes() {
		res[kv.GetKey()] = kv.GetValue().String()
	}
	for k, want := range map[string]string{
		"service.name": `string_value:"unknown_service"`, "service.namespace": `string_value:"my-namespace"`,
		"bool_key": "bool_value:true", "int_key": "int_value:1", "double_key": "double_value:1.1",
		"int_array_key":          "array_value:{values:{int_value:1} values:{int_value:2}}",
		"telemetry.sdk.language": `string_value:"go"`,
	} {
		if got := strings.ReplaceAll(res[k], "  ", " "); got != want {
			t.Errorf("resource %s = %s, want %s", k, got, want)
		}
	}
	if rl.GetSchemaUrl() != "https://opentelemetry.io/schemas/1.16.0" {
		t.Errorf("schema URL %q", rl.GetSchemaUrl())
	}
	mu.Lock()
	defer mu.Unlock()
	if got := md.Get("api-key"); len(got) != 1 || got[0] != "1234" {
		t.Errorf("api-key header: %v", got)
	}
}

// The file's resource takes the environment's as a given resource does:
// through the one reading that quotes no secret and half-reads no bad
// value, with OTEL_SERVICE_NAME over the unknown_service fallback. (The
// SDK's default resource, which the file's was built on, is read once per
// process and bypassed that check: the second case got the first's
// environment.)
func TestConfigFileResourceReadsTheEnvironmentOnce(t *testing.T) {
	for _, tc := range []struct {
		name, attrs, service, wantService string
		wantTeam                          bool
	}{
		{"bad attributes", "team=ml,s3cret", "", "unknown_service:", false},
		{"good attributes and a name", "team=ml", "trainer", "trainer", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			var handled []string
			otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { handled = append(handled, err.Error()) }))
			defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
			srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
			t.Setenv("ZAPLENS_TEST_ENDPOINT", srv.Addr)
			t.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/resource-no-service.yaml")
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", tc.attrs)
			t.Setenv("OTEL_SERVICE_NAME", tc.service)
			var buf lockedBuffer
			p, err := NewLoggerProvider(context.Background(), WithLossWriter(&buf))
			if err != nil {
				t.Fatal(err)
			}
			rl := shipOne(t, p, srv, log.Record{})
			res := map[string]string{}
			for _, kv := range rl.GetResource().GetAttributes() {
				res[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			if res["from.file"] != "yes" || !strings.HasPrefix(res["service.name"], tc.wantService) || (res["team"] == "ml") != tc.wantTeam {
				t.Errorf("resource %v: want from.file, service.name %s..., team %v", res, tc.wantService, tc.wantTeam)
			}
			for _, h := range append(handled, buf.String()) {
				if strings.Contains(h, "s3cret") {
					t.Errorf("a secret told: %q", h)
				}
			}
		})
	}
}

// Options win over the file, as over the variables.
func TestConfigFileOptionsWin(t *testing.T) {
	cleanEnv(t)
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	t.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/logs-grpc.yaml")
	t.Setenv("ZAPLENS_TEST_ENDPOINT", "127.0.0.1:1")
	ctx := context.Background()
	p, err := NewLoggerProvider(ctx, WithLossWriter(nil), WithEndpoint("http://"+srv.Addr),
		WithTLSConfig(nil), WithAttributeCountLimit(10), WithServiceName("from-option"))
	if err != nil {
		t.Fatal(err)
	}
	var r log.Record
	r.AddAttributes(attribute.Int("a", 1), attribute.Int("b", 2), attribute.Int("c", 3), attribute.Int("d", 4))
	rl := shipOne(t, p, srv, r)
	if n := len(rl.GetScopeLogs()[0].GetLogRecords()[0].GetAttributes()); n != 4 {
		t.Errorf("%d attributes: the option's limit did not win", n)
	}
	for _, kv := range rl.GetResource().GetAttributes() {
		if kv.GetKey() == "service.name" && kv.GetValue().GetStringValue() != "from-option" {
			t.Errorf("service.name = %s", kv.GetValue())
		}
	}
}

// What the file asks that zaplens cannot do fails with the setting's path,
// and the provider takes records, counts them dropped and says why.
func TestConfigFileRefused(t *testing.T) {
	for file, want := range map[string]string{
		"kitchen-sink-logs.yaml": "logger_provider.processors[1]: zaplens runs one processor",
		"simple.yaml":            "logger_provider.processors[0].simple: not supported",
		"file-exporter.yaml":     "logger_provider.processors[0].batch.exporter: no exporter zaplens can run",
		"http-json.yaml":         `logger_provider.processors[0].batch.exporter.otlp_http.encoding: "json" is not supported`,
		"zstd.yaml":              `logger_provider.processors[0].batch.exporter.otlp_grpc.compression: "zstd" is not supported`,
		"batch-over-queue.yaml":  "batch size 200 (OTEL_CONFIG_FILE's logger_provider.processors[0].batch.max_export_batch_size) is larger than queue size 100",
		"missing.yaml":           "no such file",
	} {
		t.Run(file, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/"+file)
			p, err := NewLoggerProvider(context.Background(), WithLossWriter(nil))
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "OTEL_CONFIG_FILE") {
				t.Fatalf("err = %v, want one naming OTEL_CONFIG_FILE and %q", err, want)
			}
			emit(p, 2)
			if s := p.Stats(); s.Dropped != 2 {
				t.Errorf("stats %v", s)
			}
			if err := p.Shutdown(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
}

// A file without logger_provider, or disabled, gives a no-op provider, as
// otelconf.NewSDK gives a no-op LoggerProvider; the console exporter is
// taken from the file too.
func TestConfigFileNoopAndConsole(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/no-logs.yaml")
	p, err := NewLoggerProvider(context.Background())
	if err != nil || p.pipe != nil || p.void != nil {
		t.Fatalf("not a no-op: %v", err)
	}
	t.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/console.yaml")
	var out strings.Builder
	p, err = NewLoggerProvider(context.Background(), WithConsoleWriter(&out), WithLossWriter(nil))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 1)
	if err := shutdownWithin(p, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "from-file") {
		t.Errorf("console output without the file's service name: %s", out.String())
	}
}

// Without otlplog/configfile linked in, a set OTEL_CONFIG_FILE is an error
// naming the import, and the provider sends nothing: the variables the
// file replaces are no fallback, the user asked for the file.
func TestConfigFileWithoutParser(t *testing.T) {
	cleanEnv(t)
	parse := declarative.Registered()
	declarative.Register(nil)
	t.Cleanup(func() { declarative.Register(parse) })
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	t.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/logs-grpc.yaml")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+srv.Addr)
	p, err := NewLoggerProvider(context.Background(), WithLossWriter(nil))
	const want = `OTEL_CONFIG_FILE=testdata/otelconf/logs-grpc.yaml: no parser of the file is linked in: import _ "github.com/zaplens/zaplens/otlplog/configfile"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one with %q", err, want)
	}
	emit(p, 2)
	if err := p.Shutdown(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Shutdown: %v", err)
	}
	if s := p.Stats(); s.Dropped != 2 {
		t.Errorf("stats %v", s)
	}
	if n := len(srv.Resources()); n != 0 {
		t.Errorf("%d resource logs sent to the variables' endpoint", n)
	}
}

// The pipeline itself links no reader of the file: otelconf, the trace
// and metric exporters it brings, and the checking of what the file says,
// come with otlplog/configfile only.
func TestPipelineLinksNoConfigParser(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for dep := range strings.Lines(string(out)) {
		if strings.HasPrefix(dep, "go.opentelemetry.io/contrib/otelconf") || strings.HasPrefix(dep, configFileImport) {
			t.Errorf("otlplog imports %s", strings.TrimSpace(dep))
		}
	}
}

// The file's errors are told in the file's order, the first only but for
// the batch's two durations; an option leaves its setting's value unread,
// its error too, and an option that chose the exporter all of the
// exporter's; the errors of no setting (an exporter zaplens does not run,
// the resource) are told whatever the options.
func TestApplyFileOrder(t *testing.T) {
	bad := func(at string) declarative.Value[time.Duration] {
		return declarative.Value[time.Duration]{At: at, Err: errors.New(at)}
	}
	badName := declarative.Value[string]{At: "name", Err: errors.New("name")}
	key := "/nonexistent/key.pem" // without its certificate: refused unread
	badTLS := declarative.Value[confval.TLSFiles]{At: "tls", V: confval.TLSFiles{Key: &key, Unpaired: "tls"}}
	for _, tc := range []struct {
		name string
		f    declarative.Settings
		opts []Option
		want string
	}{
		{"durations, both", declarative.Settings{ScheduleDelay: bad("delay"), ExportTimeout: bad("timeout"),
			Exporter: declarative.ExporterSettings{Refused: errors.New("refused")}}, nil, "delay\ntimeout"},
		{"a duration an option set", declarative.Settings{ScheduleDelay: bad("delay"), ExportTimeout: bad("timeout")},
			[]Option{WithExportTimeout(time.Second)}, "delay"},
		{"refused exporter, over an option", declarative.Settings{Exporter: declarative.ExporterSettings{Refused: errors.New("refused")},
			ResourceErr: errors.New("resource")}, []Option{WithExporterName("console")}, "refused"},
		{"the exporter's first", declarative.Settings{Exporter: declarative.ExporterSettings{Name: badName, Timeout: bad("otlp timeout"), TLS: badTLS},
			ResourceErr: errors.New("resource")}, nil, "name"},
		{"the exporter's, one an option set", declarative.Settings{Exporter: declarative.ExporterSettings{Timeout: bad("otlp timeout"), TLS: badTLS}},
			[]Option{WithOTLPTimeout(time.Second)}, "tls"},
		{"the exporter's, the exporter an option's", declarative.Settings{Exporter: declarative.ExporterSettings{Name: badName, TLS: badTLS},
			ResourceErr: errors.New("resource")}, []Option{WithExporterName("otlp")}, "resource"},
		{"disabled", declarative.Settings{Disabled: true, ScheduleDelay: bad("delay"), ResourceErr: errors.New("resource")}, nil, "<nil>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newProviderConfig(tc.opts)
			if got := fmt.Sprint(c.applyFile(&tc.f)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// shipOne emits r through p, shuts p down and returns the resource's logs
// srv received, failing the test unless there is one resource.
func shipOne(t *testing.T, p *LoggerProvider, srv *otlpServer, r log.Record) *logpb.ResourceLogs {
	t.Helper()
	ctx := context.Background()
	p.Logger("config").Emit(ctx, r)
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rls := srv.Resources()
	if len(rls) != 1 {
		t.Fatalf("%d resource logs", len(rls))
	}
	return rls[0]
}
