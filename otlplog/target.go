package otlplog

import (
	"fmt"
	"strings"

	"github.com/zaplens/zaplens/internal/transport"
)

// target is where and how the transport sends.
type target struct {
	protocol transport.Protocol
	// Endpoint is what the transport is given: for OTLP/HTTP, its Path is
	// the path the logs are posted to; gRPC has none.
	transport.Endpoint
	display string // for messages: scheme, host and port
}

// target resolves where and how to send. The insecure variables apply only
// to an endpoint without a scheme, as the OTLP spec says; WithInsecure
// turns TLS off whatever the scheme.
func (c *providerConfig) target() (target, error) {
	p := transport.Protocol(c.protocol.value)
	e, err := transport.ParseEndpoint(c.endpoint.value, p, c.insecure.value)
	if err != nil {
		return target{}, fmt.Errorf("%s: %w", c.endpoint.from, err)
	}
	t := target{protocol: p, Endpoint: e}
	if c.insecure.value && !c.insecure.env { // WithInsecure's
		if t.TLS && c.endpoint.from != "WithEndpoint" {
			c.warnings = append(c.warnings, fmt.Sprintf("WithInsecure turns TLS off for the endpoint of %s, which asks for it", c.endpoint.from))
		}
		t.TLS = false
	}
	if err := c.checkPlaintextHeaders(t); err != nil {
		return t, err
	}
	t.display = "https://" + t.HostPort()
	if !t.TLS {
		t.display = "http://" + t.HostPort()
	}
	if t.protocol == transport.GRPC {
		if t.Path != "" && t.Path != "/" {
			c.warnings = append(c.warnings, fmt.Sprintf("%s has a path, which OTLP/gRPC does not use: sending to %s (OTLP/HTTP, which uses paths such as /v1/logs, listens on port 4318: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)", c.endpoint.from, t.display))
		}
		t.Path = ""
		return t, nil
	}
	// OTLP/HTTP: the generic variable names a base URL, to which the signal's
	// path is added; the logs variable is the URL itself.
	switch {
	case c.endpoint.from == "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT":
	case c.endpoint.from == "OTEL_EXPORTER_OTLP_ENDPOINT":
		t.Path = strings.TrimSuffix(t.Path, "/") + "/v1/logs"
	case t.Path == "" || t.Path == "/":
		t.Path = "/v1/logs"
	}
	if t.Path == "" {
		t.Path = "/"
	}
	return t, nil
}
