package gateways

// The gateway configuration: deploy/gateway.yaml as shipped, read from the
// checkout, with the two changes a machine of its own needs, each made
// here and nowhere else:
//
//   - the elasticsearch exporter is taken out (its definition and its place
//     in the logs pipeline): the Go module proxy refuses its module, so the
//     Collector built (internal/otelcol) has no such component;
//   - a second configuration, merged after it, gives each replica its own
//     address for its telemetry (the Collector's default, port 8888 on
//     every address, would collide), at which each replica's count of
//     accepted records is read.
//
// Everything else (receivers, keepalive, memory_limiter, the otlp_http
// exporter to VictoriaLogs batching in its persistent queue, the traces
// pipeline to a Jaeger that is not there) runs as shipped, its addresses
// given by the variables the file reads.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/zaplens/zaplens/internal/otelcol"
)

// The replicas' own counts: what the receiver accepted (answered as
// taken), and what the exporter to VictoriaLogs sent.
const (
	AcceptedMetric = "otelcol_receiver_accepted_log_records"
	SentMetric     = "otelcol_exporter_sent_log_records"
)

// Config writes the gateway configuration into dir and returns its
// path.
func Config(dir string) (string, error) {
	manifest, err := otelcol.ManifestPath()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(manifest), "gateway.yaml"))
	if err != nil {
		return "", err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return "", err
	}
	exporters, _ := cfg["exporters"].(map[string]any)
	if _, ok := exporters["elasticsearch"]; !ok {
		return "", errors.New("deploy/gateway.yaml has no elasticsearch exporter: update gateways.Config")
	}
	delete(exporters, "elasticsearch")
	logs := cfg["service"].(map[string]any)["pipelines"].(map[string]any)["logs"].(map[string]any)
	logs["exporters"] = slices.DeleteFunc(logs["exporters"].([]any), func(e any) bool { return e == "elasticsearch" })
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "gateway.yaml")
	return path, os.WriteFile(path, out, 0o644)
}

// Start runs the Collector bin as the replica at host: gateway (Config's
// file) and then host's own telemetry configuration, written into dir;
// its listeners at ports; its persistent queue in dir/queue-<host>, kept
// across a restart on the same dir; exporting to the VictoriaLogs (a
// vlinsert) at victoriaLogs, "host:port". output, if not nil, gets the
// Collector's log.
func Start(ctx context.Context, bin, dir, host string, ports Ports, gateway, victoriaLogs string, output io.Writer) (*otelcol.Process, error) {
	telemetry, err := telemetryConfig(dir, host, ports.Metrics)
	if err != nil {
		return nil, err
	}
	p, err := otelcol.Start(ctx, bin, otelcol.Options{
		Configs: []string{gateway, telemetry},
		Env: []string{
			"GATEWAY_GRPC_ENDPOINT=" + At(host, ports.GRPC),
			"GATEWAY_HTTP_ENDPOINT=" + At(host, ports.HTTP),
			"GATEWAY_HEALTH_ENDPOINT=" + At(host, ports.Health),
			"GATEWAY_QUEUE_DIR=" + filepath.Join(dir, "queue-"+host),
			"VICTORIALOGS_URL=http://" + victoriaLogs,
			// No Jaeger: the traces pipeline runs, and nothing sends it a span.
			"JAEGER_OTLP_ENDPOINT=127.0.0.1:9",
		},
		Health: At(host, ports.Health),
		Output: output,
	})
	if err != nil {
		return nil, fmt.Errorf("gateway %s: %w", host, err)
	}
	return p, nil
}

// telemetryConfig writes the per-replica part into dir: its metrics at
// host:port, where the Collector's default, port 8888 on every address,
// would collide.
func telemetryConfig(dir, host string, port int) (string, error) {
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
	return path, os.WriteFile(path, []byte(cfg), 0o644)
}
