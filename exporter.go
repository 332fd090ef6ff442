package zaplens

import (
	"context"
	"crypto/tls"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// newExporter builds the exporter the configuration names.
func newExporter(ctx context.Context, c *providerConfig) (sdklog.Exporter, error) {
	switch {
	case c.exporter != nil:
		return c.exporter, nil
	case c.exporterName.value == "console":
		w := c.consoleWriter
		if w == nil {
			w = os.Stdout
		}
		return stdoutlog.New(stdoutlog.WithWriter(w))
	}
	return newOTLPExporter(ctx, c)
}

// newOTLPExporter passes every setting to otlploggrpc explicitly, so that
// its own reading of the environment is skipped: it would redo ours and, on
// a bad value, write a message that quotes it. (It still loads the
// certificate files, already checked here, into a configuration that the
// credentials given here override.)
func newOTLPExporter(ctx context.Context, c *providerConfig) (sdklog.Exporter, error) {
	t, err := c.target()
	if err != nil {
		return nil, err
	}
	creds, scheme := insecure.NewCredentials(), "http://"
	if t.tls {
		creds, scheme = credentials.NewTLS(tlsConfig(c.tlsConfig.value)), "https://"
	}
	compression := c.compression.value
	if compression == "" {
		compression = "none"
	}
	return otlploggrpc.New(ctx,
		// A URL, not WithEndpoint: it also sets insecure, which the
		// exporter would otherwise read from the environment.
		otlploggrpc.WithEndpointURL(scheme+t.hostport),
		otlploggrpc.WithTLSCredentials(creds),
		otlploggrpc.WithHeaders(c.headers.value),
		otlploggrpc.WithCompressor(compression),
		otlploggrpc.WithTimeout(c.otlpTimeout.value),
		otlploggrpc.WithRetry(retry),
		otlploggrpc.WithDialOption(
			grpc.WithDefaultCallOptions(grpc.WaitForReady(true)),
			grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnect, MinConnectTimeout: 5 * time.Second}),
		),
	)
}

// A collector that is down, or restarting, must only delay delivery. By
// default an export fails at once while gRPC has no connection, and the
// exporter's next try comes 5 s later, when gRPC may be waiting out its own
// reconnection backoff (up to 2 min): a batch in flight when the collector
// went away was lost even if it came back within a second. Instead an
// export waits for the connection, within its timeout; reconnection is
// tried at least every 5 s; and retries come sooner.
var (
	reconnect = backoff.Config{BaseDelay: 500 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second}
	retry     = otlploggrpc.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 5 * time.Second, MaxElapsedTime: time.Minute}
)

// tlsConfig copies the user's configuration, as gRPC may set fields of the
// one it is given, and requires TLS 1.2 at least.
func tlsConfig(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return &tls.Config{MinVersion: tls.VersionTLS12}
	}
	cfg = cfg.Clone()
	if cfg.MinVersion == 0 {
		cfg.MinVersion = tls.VersionTLS12
	}
	return cfg
}
