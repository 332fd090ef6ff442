//go:build linux

package integration

// The tier's gateway configuration: deploy/gateway.yaml as shipped, read
// from the checkout, with the two changes the test's machine needs, each
// made here and nowhere else:
//
//   - the elasticsearch exporter is taken out (its definition and its place
//     in the logs pipeline): the Go module proxy refuses its module, so the
//     Collector built (internal/otelcol) has no such component;
//   - a second configuration, merged after it, gives each replica its own
//     address for its telemetry (the Collector's default, port 8888 on
//     every address, would collide), at which the test reads each
//     replica's count of accepted records.
//
// Everything else (receivers, keepalive, memory_limiter, batch, the
// otlp_http exporter to VictoriaLogs with its persistent queue, the traces
// pipeline to a Jaeger that is not there) runs as shipped, its addresses
// given by the variables the file reads.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// tierGatewayConfig writes the gateway configuration into dir and returns
// its path.
func tierGatewayConfig(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "deploy", "gateway.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	exporters, _ := cfg["exporters"].(map[string]any)
	if _, ok := exporters["elasticsearch"]; !ok {
		t.Fatal("deploy/gateway.yaml has no elasticsearch exporter: update tierGatewayConfig")
	}
	delete(exporters, "elasticsearch")
	logs := cfg["service"].(map[string]any)["pipelines"].(map[string]any)["logs"].(map[string]any)
	logs["exporters"] = slices.DeleteFunc(logs["exporters"].([]any), func(e any) bool { return e == "elasticsearch" })
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tierTelemetryConfig is the per-replica part: its metrics at host:port.
func tierTelemetryConfig(t *testing.T, dir, host string, port int) string {
	t.Helper()
	cfg := fmt.Sprintf(`service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: %q
                port: %d
`, host, port)
	path := filepath.Join(dir, "telemetry-"+host+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
