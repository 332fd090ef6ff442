package main

// The embedded backend: a small OTLP/gRPC server for logs and traces on
// loopback, used when OTEL_EXPORTER_OTLP_ENDPOINT is not set. It keeps what
// it receives and prints it grouped by trace, each span with its log lines
// under it: the view a tracing backend gives. It is the receiver of
// cmd/zaplens-receive (internal/otlpview), built on the OTLP protobuf
// services and gRPC only, so the example needs no Collector.

import "github.com/zaplens/zaplens/internal/otlpview"

// backend is an otlpview.Receiver served over OTLP/gRPC on 127.0.0.1.
type backend struct {
	*otlpview.Receiver
	srv *otlpview.Server
}

// startBackend listens on 127.0.0.1 on a free port and serves OTLP/gRPC.
func startBackend() (*backend, error) {
	b := &backend{Receiver: &otlpview.Receiver{}}
	srv, err := otlpview.Listen(b.Receiver, "127.0.0.1:0", "")
	if err != nil {
		return nil, err
	}
	b.srv = srv
	return b, nil
}

// Addr is "127.0.0.1:PORT".
func (b *backend) Addr() string { return b.srv.GRPCAddr() }

// Stop stops serving; what was received is kept.
func (b *backend) Stop() { b.srv.Close() }
