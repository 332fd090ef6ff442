package otlplog

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

func resourceMap(t *testing.T, opts ...Option) map[attribute.Key]string {
	t.Helper()
	var c providerConfig
	for _, o := range opts {
		o.applyProvider(&c)
	}
	if err := c.readStep(stepResource); err != nil {
		t.Fatal(err)
	}
	res, err := newResource(context.Background(), &c)
	if err != nil {
		t.Fatal(err)
	}
	m := map[attribute.Key]string{}
	for _, kv := range res.Attributes() {
		m[kv.Key] = kv.Value.String()
	}
	return m
}

func TestResourceFromEnv(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,team=ml,deployment.environment.name=prod")
	t.Setenv("OTEL_SERVICE_NAME", "trainer")
	t.Setenv("OMPI_COMM_WORLD_RANK", "2")
	t.Setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0")
	t.Setenv("OMPI_COMM_WORLD_SIZE", "4")
	m := resourceMap(t)
	for k, v := range map[attribute.Key]string{
		"service.name": "trainer", "team": "ml", "deployment.environment.name": "prod",
		RankKey: "2", LocalRankKey: "0", WorldSizeKey: "4", "telemetry.sdk.language": "go",
	} {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	for _, k := range []attribute.Key{"host.name", "process.pid", "process.executable.name", "process.runtime.name", "os.type"} {
		if m[k] == "" {
			t.Errorf("no %s", k)
		}
	}
	if _, ok := m["process.command_args"]; ok {
		t.Error("the command line is in the resource")
	}
}

func TestResourceOptionsWin(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=env")
	t.Setenv("RANK", "1")
	m := resourceMap(t, WithServiceName("from-option"), WithResourceAttributes(attribute.String("team", "option"), RankKey.Int(7)))
	if m["service.name"] != "from-option" || m["team"] != "option" || m[RankKey] != "7" {
		t.Errorf("got %v", m)
	}
}

func TestResourceDefaults(t *testing.T) {
	cleanEnv(t)
	m := resourceMap(t)
	if !strings.HasPrefix(m["service.name"], "unknown_service:") {
		t.Errorf("service.name = %q", m["service.name"])
	}
	if _, ok := m[RankKey]; ok {
		t.Error("rank without a launcher")
	}
}

// The options still win over the given resource, and the environment
// stays under it, as the doc says; a nil resource keeps the detection.
func TestWithResourceOptions(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team=env,only.env=1")
	res := resource.NewWithAttributes(semconv.SchemaURL, attribute.String("team", "given"), attribute.String("service.name", "given"))
	m := resourceMap(t, WithResource(res), WithResourceAttributes(attribute.String("team", "option")))
	if m["team"] != "option" || m["service.name"] != "given" || m["only.env"] != "1" {
		t.Errorf("got %v", m)
	}
	if _, ok := m["host.name"]; ok {
		t.Error("detection with a given resource")
	}
	m = resourceMap(t, WithResource(nil))
	if m["host.name"] == "" || m["service.name"] != "from-env" {
		t.Errorf("WithResource(nil) does not keep the detection: %v", m)
	}
	// A malformed variable is ignored whole, as without WithResource; the
	// service name still counts.
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "team")
	c := newProviderConfig([]Option{WithResource(res)})
	if err := c.resolveEnv(); err != nil || c.resourceEnv.set || len(c.resourceEnv.value) > 0 || len(c.warnings) != 1 {
		t.Fatalf("the malformed variable is not ignored, and told: %v, %+v, %q", err, c.resourceEnv, c.warnings)
	}
	r, err := newResource(context.Background(), &c)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := r.Set().Value("service.name"); v.AsString() != "given" {
		t.Errorf("service.name = %q", v.AsString())
	}
}
