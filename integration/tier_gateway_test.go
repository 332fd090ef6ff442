//go:build linux

package integration

// The tier's gateway configuration: deploy/gateway.yaml as shipped, with
// the two changes the test's machine needs, made in internal/gateways (and
// nowhere else), which the example's -tier mode runs too:
//
//   - the elasticsearch exporter is taken out (its definition and its place
//     in the logs pipeline): the Go module proxy refuses its module, so the
//     Collector built (internal/otelcol) has no such component;
//   - a second configuration, merged after it, gives each replica its own
//     address for its telemetry (the Collector's default, port 8888 on
//     every address, would collide), at which the test reads each
//     replica's count of accepted records.
//
// Everything else (receivers, keepalive, memory_limiter, the otlp_http
// exporter to VictoriaLogs batching in its persistent queue, the traces
// pipeline to a Jaeger that is not there) runs as shipped, its addresses
// given by the variables the file reads.

import (
	"testing"

	"github.com/zaplens/zaplens/internal/gateways"
)

// tierGatewayConfig writes the gateway configuration into dir and returns
// its path.
func tierGatewayConfig(t *testing.T, dir string) string {
	t.Helper()
	path, err := gateways.Config(dir)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
