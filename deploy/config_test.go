package deploy

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/otelcol/otelcoltest"
	"go.opentelemetry.io/collector/pipeline"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.yaml.in/yaml/v3"
)

// The real factories, from the modules deploy/go.mod requires, and the
// module each comes from as the builder manifest names it.
var (
	realReceivers = map[string]receiver.Factory{
		"go.opentelemetry.io/collector/receiver/otlpreceiver": otlpreceiver.NewFactory(),
	}
	realProcessors = map[string]processor.Factory{
		"go.opentelemetry.io/collector/processor/batchprocessor":         batchprocessor.NewFactory(),
		"go.opentelemetry.io/collector/processor/memorylimiterprocessor": memorylimiterprocessor.NewFactory(),
	}
	realExporters = map[string]exporter.Factory{
		"go.opentelemetry.io/collector/exporter/debugexporter":    debugexporter.NewFactory(),
		"go.opentelemetry.io/collector/exporter/otlpexporter":     otlpexporter.NewFactory(),
		"go.opentelemetry.io/collector/exporter/otlphttpexporter": otlphttpexporter.NewFactory(),
	}
	realExtensions = map[string]extension.Factory{
		"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension": healthcheckextension.NewFactory(),
		"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage":  filestorage.NewFactory(),
	}
)

// factories is what a Collector built from builder-config.yaml has: the
// real factories, the stand-ins for the two contrib exporters the proxy
// refuses, and, as in a built Collector, every deprecated alias (otlp for
// otlp_grpc, otlphttp for otlp_http), so that an alias loads as it would
// in production and TestNoDeprecatedNames is what refuses it.
func factories(t *testing.T) otelcol.Factories {
	t.Helper()
	var f otelcol.Factories
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap(values(realReceivers)...); err != nil {
		t.Fatal(err)
	}
	if f.Processors, err = otelcol.MakeFactoryMap(values(realProcessors)...); err != nil {
		t.Fatal(err)
	}
	exps := append(values(realExporters),
		standInFactory(elasticsearchType, newESConfig),
		standInFactory(loadbalancingType, newLBConfig))
	if f.Exporters, err = otelcol.MakeFactoryMap(exps...); err != nil {
		t.Fatal(err)
	}
	if f.Extensions, err = otelcol.MakeFactoryMap(values(realExtensions)...); err != nil {
		t.Fatal(err)
	}
	return f
}

func values[F any](m map[string]F) []F {
	var out []F
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// shippedConfigs is every Collector configuration in deploy/: each *.yaml
// but the builder manifest. A new one is tested without naming it here.
func shippedConfigs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == "builder-config.yaml" })
	if len(files) < 3 {
		t.Fatalf("shipped configurations: %v; want gateway.yaml, agent.yaml and local.yaml at least", files)
	}
	return files
}

// load loads a configuration as the Collector does (the file, ${env:...}
// with its defaults, every component's configuration decoded strictly into
// its factory's type) and validates it (each component's rules, and the
// pipelines: every component named is defined, every one defined is used).
func load(t *testing.T, file string) (*otelcol.Config, error) {
	t.Helper()
	return otelcoltest.LoadConfigAndValidate(file, factories(t))
}

// TestShippedConfigsLoad loads every shipped configuration.
func TestShippedConfigsLoad(t *testing.T) {
	for _, file := range shippedConfigs(t) {
		t.Run(file, func(t *testing.T) {
			cfg, err := load(t, file)
			if err != nil {
				t.Fatalf("%s does not load: %v", file, err)
			}
			if len(cfg.Service.Pipelines) == 0 {
				t.Fatalf("%s has no pipelines", file)
			}
		})
	}
}

// TestNoDeprecatedNames refuses a component named by a deprecated alias:
// in v0.165 the OTLP exporters are otlp_grpc and otlp_http, and otlp and
// otlphttp still load, with a warning, until they are removed.
func TestNoDeprecatedNames(t *testing.T) {
	f := factories(t)
	for _, file := range shippedConfigs(t) {
		cfg, err := load(t, file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, id := range usedIDs(cfg) {
			var canonical component.Type
			switch id.kind {
			case "receiver":
				canonical = f.Receivers[id.Type()].Type()
			case "processor":
				canonical = f.Processors[id.Type()].Type()
			case "exporter":
				canonical = f.Exporters[id.Type()].Type()
			case "extension":
				canonical = f.Extensions[id.Type()].Type()
			}
			if canonical != id.Type() {
				t.Errorf("%s: %s %q uses the deprecated name %q of %q", file, id.kind, id, id.Type(), canonical)
			}
		}
	}
}

type kindID struct {
	component.ID
	kind string
}

func usedIDs(cfg *otelcol.Config) []kindID {
	var ids []kindID
	for id := range cfg.Receivers {
		ids = append(ids, kindID{id, "receiver"})
	}
	for id := range cfg.Processors {
		ids = append(ids, kindID{id, "processor"})
	}
	for id := range cfg.Exporters {
		ids = append(ids, kindID{id, "exporter"})
	}
	for id := range cfg.Extensions {
		ids = append(ids, kindID{id, "extension"})
	}
	return ids
}

// manifest is the part of builder-config.yaml the test reads.
type manifest struct {
	Receivers  []struct{ GoMod string } `yaml:"receivers"`
	Processors []struct{ GoMod string } `yaml:"processors"`
	Exporters  []struct{ GoMod string } `yaml:"exporters"`
	Extensions []struct{ GoMod string } `yaml:"extensions"`
	Providers  []struct{ GoMod string } `yaml:"providers"`
}

// TestManifestHasEveryComponent checks builder-config.yaml against the
// configurations and against deploy/go.mod: every component type a
// configuration uses comes from a module the manifest lists, and every
// module the manifest lists that this test links is at the version it is
// tested at, so that what CI loaded is what the builder builds.
func TestManifestHasEveryComponent(t *testing.T) {
	raw, err := os.ReadFile("builder-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{} // module path -> version
	for _, list := range [][]struct{ GoMod string }{m.Receivers, m.Processors, m.Exporters, m.Extensions, m.Providers} {
		for _, e := range list {
			path, version, ok := strings.Cut(e.GoMod, " ")
			if !ok {
				t.Fatalf("builder-config.yaml: gomod %q has no version", e.GoMod)
			}
			listed[path] = version
		}
	}

	// Types each listed module provides.
	provides := map[string]string{} // "kind/type" -> module
	add := func(kind string, typ component.Type, module string) { provides[kind+"/"+typ.String()] = module }
	for mod, f := range realReceivers {
		add("receiver", f.Type(), mod)
	}
	for mod, f := range realProcessors {
		add("processor", f.Type(), mod)
	}
	for mod, f := range realExporters {
		add("exporter", f.Type(), mod)
	}
	for mod, f := range realExtensions {
		add("extension", f.Type(), mod)
	}
	for typ, mod := range standInModules {
		add("exporter", typ, mod)
	}

	for _, file := range shippedConfigs(t) {
		cfg, err := load(t, file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, id := range usedIDs(cfg) {
			mod, ok := provides[id.kind+"/"+id.Type().String()]
			if !ok {
				t.Errorf("%s: %s %q comes from no module this test knows", file, id.kind, id)
				continue
			}
			if _, ok := listed[mod]; !ok {
				t.Errorf("%s: %s %q needs %s, which builder-config.yaml does not list", file, id.kind, id, mod)
			}
		}
	}

	// Versions: the manifest's against deploy/go.mod's.
	required := goModRequires(t)
	for mod, version := range listed {
		have, linked := required[mod]
		if !linked {
			if !slices.Contains(slices.Collect(maps.Values(standInModules)), mod) {
				t.Errorf("builder-config.yaml lists %s, which deploy/go.mod does not require; add its factory to the test or drop it", mod)
			}
			continue
		}
		if have != version {
			t.Errorf("builder-config.yaml has %s %s, deploy/go.mod %s", mod, version, have)
		}
	}
}

// goModRequires reads deploy/go.mod's require lines: module path -> version.
func goModRequires(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	req := map[string]string{}
	inBlock := false
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		line, _, _ = strings.Cut(line, "//")
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		if f := strings.Fields(line); len(f) == 2 {
			req[f[0]] = f[1]
		}
	}
	return req
}

// gatewayConf is gateway.yaml as a map, resolved as the Collector resolves
// it, for the checks on what the gateway must do.
func gatewayConf(t *testing.T) *confmap.Conf { return resolvedConf(t, "gateway.yaml") }

// resolvedConf is file as a map, resolved as the Collector resolves it.
func resolvedConf(t *testing.T, file string) *confmap.Conf {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := confmap.NewResolver(confmap.ResolverSettings{
		URIs:              []string{"file:" + abs},
		ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		DefaultScheme:     "env",
	})
	if err != nil {
		t.Fatal(err)
	}
	conf, err := r.Resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return conf
}

// TestGatewayDoesWhatTheDocsSay checks the properties docs/collector-tier.md
// promises of gateway.yaml, on the loaded configuration.
func TestGatewayDoesWhatTheDocsSay(t *testing.T) {
	cfg, err := load(t, "gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}

	// OTLP in over both gRPC and HTTP, gRPC connections closed after a while.
	rc := cfg.Receivers[component.MustNewID("otlp")].(*otlpreceiver.Config)
	grpc := rc.Protocols.GRPC.Get()
	if grpc == nil || rc.Protocols.HTTP.Get() == nil {
		t.Fatal("the otlp receiver must take both gRPC and HTTP")
	}
	ka := grpc.Keepalive.Get()
	if ka == nil || ka.ServerParameters.Get() == nil || ka.ServerParameters.Get().MaxConnectionAge <= 0 {
		t.Fatal("the gRPC receiver must set keepalive::server_parameters::max_connection_age, or each client stays on one replica")
	}
	if age := ka.ServerParameters.Get().MaxConnectionAge; age > 10*time.Minute {
		t.Errorf("max_connection_age %v: too long to spread clients over new replicas", age)
	}

	// memory_limiter alone in every pipeline: a batch processor answers
	// the client before the batch reaches the exporter's disk queue, and a
	// replica killed loses what it acknowledged (integration's TestTier).
	for id, p := range cfg.Service.Pipelines {
		var names []string
		for _, pid := range p.Processors {
			names = append(names, pid.Type().String())
		}
		if !slices.Equal(names, []string{"memory_limiter"}) {
			t.Errorf("pipeline %s: processors %v; want memory_limiter alone (batching in the exporters' queues)", id, names)
		}
	}

	// Logs to VictoriaLogs and Elasticsearch, traces to Jaeger.
	want := map[pipeline.ID][]string{
		pipeline.NewID(pipeline.SignalLogs):   {"otlp_http/victorialogs", "elasticsearch"},
		pipeline.NewID(pipeline.SignalTraces): {"otlp_grpc/jaeger"},
	}
	for pid, exps := range want {
		p, ok := cfg.Service.Pipelines[pid]
		if !ok {
			t.Fatalf("no %s pipeline", pid)
		}
		var got []string
		for _, e := range p.Exporters {
			got = append(got, e.String())
		}
		if !slices.Equal(got, exps) {
			t.Errorf("pipeline %s exports to %v; want %v", pid, got, exps)
		}
	}

	// VictoriaLogs: its OTLP path, protobuf, and a stream key.
	vl := cfg.Exporters[component.MustNewIDWithName("otlp_http", "victorialogs")].(*otlphttpexporter.Config)
	if !strings.HasSuffix(vl.LogsEndpoint, "/insert/opentelemetry/v1/logs") {
		t.Errorf("VictoriaLogs logs_endpoint %q: VictoriaLogs takes OTLP at /insert/opentelemetry/v1/logs", vl.LogsEndpoint)
	}
	if vl.Encoding != "proto" {
		t.Errorf("VictoriaLogs encoding %q: it takes protobuf only", vl.Encoding)
	}
	var streamFields string
	for _, h := range vl.ClientConfig.Headers {
		if h.Name == "VL-Stream-Fields" {
			streamFields = string(h.Value)
		}
	}
	if streamFields == "" || strings.Contains(streamFields, "process.pid") {
		t.Errorf("VL-Stream-Fields %q: name the fields that identify a source, without process.pid", streamFields)
	}

	// Every exporter queues on disk, in the file_storage extension the
	// service starts.
	conf := gatewayConf(t)
	exporters, err := conf.Sub("exporters")
	if err != nil {
		t.Fatal(err)
	}
	storages := map[string]bool{}
	for _, e := range cfg.Service.Extensions {
		if e.Type().String() == "file_storage" {
			storages[e.String()] = true
		}
	}
	for name := range exporters.ToStringMap() {
		storage, _ := exporters.Get(name + "::sending_queue::storage").(string)
		if !storages[storage] {
			t.Errorf("exporter %s: sending_queue::storage %q is not a file_storage extension the service starts", name, storage)
		}
		if sizer, _ := exporters.Get(name + "::sending_queue::batch::sizer").(string); sizer != "items" {
			t.Errorf("exporter %s: sending_queue::batch::sizer %q; want items: batching in the queue, by records", name, sizer)
		}
	}
}

// TestNoBatchProcessor holds every shipped configuration to the gateway's
// rule: no batch processor, batching in each exporter's queue. The batch
// processor answers the client before its batch reaches an exporter (its
// consume puts the data on a channel and returns nil), and drops a batch
// the exporter refuses ("Sender failed"): acknowledged records lost when a
// replica is killed (5,632 in TestTier, benchmarks/results/
// tier-long-a13800d-batchprocessor.txt), and a full queue hidden from the
// client, which would have retried. The debug exporter, which only
// prints, is left as it is.
func TestNoBatchProcessor(t *testing.T) {
	for _, file := range shippedConfigs(t) {
		cfg, err := load(t, file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for id := range cfg.Processors {
			if id.Type().String() == "batch" {
				t.Errorf("%s defines the batch processor %s", file, id)
			}
		}
		for pid, p := range cfg.Service.Pipelines {
			for _, id := range p.Processors {
				if id.Type().String() == "batch" {
					t.Errorf("%s: pipeline %s runs the batch processor %s", file, pid, id)
				}
			}
		}
		exporters, err := resolvedConf(t, file).Sub("exporters")
		if err != nil {
			t.Fatal(err)
		}
		for id := range cfg.Exporters {
			queue := id.String() + "::sending_queue"
			switch id.Type().String() {
			case "debug":
				continue
			case "loadbalancing":
				// Its queue that batches is each replica's exporter's.
				queue = id.String() + "::protocol::otlp::sending_queue"
			}
			if sizer, _ := exporters.Get(queue + "::batch::sizer").(string); sizer != "items" {
				t.Errorf("%s: %s::batch::sizer %q; want items: batching in the queue, by records", file, queue, sizer)
			}
		}
	}
}

// TestBrokenConfigsFail shows that the load catches the mistakes it is
// there for: each case edits gateway.yaml and must fail.
func TestBrokenConfigsFail(t *testing.T) {
	raw, err := os.ReadFile("gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, old, new string
		want           string // in the error
		deprecatedOnly bool   // loads, but TestNoDeprecatedNames refuses it
	}{
		{"typo in a core exporter's key", "logs_endpoint:", "log_endpoint:", "has invalid keys: log_endpoint", false},
		{"typo in the elasticsearch section", "    api_key:", "    apikey:", "has invalid keys: apikey", false},
		{"removed elasticsearch key", "      mode: otel", "      mode: otel\n      dedot: true", "has invalid keys: dedot", false},
		{"elasticsearch mapping mode other than otel", "mode: otel", "mode: ecs", `mapping::mode "ecs" is ignored`, false},
		{"unknown component", "otlp_grpc/jaeger", "otlp_grcp/jaeger", `unknown type: "otlp_grcp"`, false},
		{"processor missing from the config", "[memory_limiter]", "[memory_limiter, batching]", `references processor "batching" which is not configured`, false},
		{"typo in the receiver's keepalive", "max_connection_age:", "max_conn_age:", "has invalid keys: max_conn_age", false},
		{"bad duration", "max_connection_age: 60s", "max_connection_age: sixty", "invalid duration", false},
		{"deprecated otlp exporter name", "otlp_grpc/jaeger", "otlp/jaeger", "", true},
		{"deprecated otlphttp exporter name", "otlp_http/victorialogs", "otlphttp/victorialogs", "", true},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(raw), c.old) {
				t.Fatalf("gateway.yaml no longer has %q: update this case", c.old)
			}
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".yaml")
			if err := os.WriteFile(file, []byte(strings.ReplaceAll(string(raw), c.old, c.new)), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := load(t, file)
			if c.deprecatedOnly {
				if err != nil {
					t.Fatalf("an alias should still load in v0.165: %v", err)
				}
				f := factories(t)
				found := false
				for _, id := range usedIDs(cfg) {
					if id.kind == "exporter" && f.Exporters[id.Type()].Type() != id.Type() {
						found = true
					}
				}
				if !found {
					t.Fatal("the deprecated name was not detected")
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded; want an error with %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("refused for another reason than %q: %v", c.want, err)
			}
		})
	}
}
