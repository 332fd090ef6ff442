package main

// The embedded backend: a small OTLP/gRPC server for logs and traces on
// loopback, used when OTEL_EXPORTER_OTLP_ENDPOINT is not set. It keeps what
// it receives and prints it grouped by trace, each span with its log lines
// under it: the view a tracing backend gives. It is the receiver of
// cmd/zaplens-receive (internal/otlpview), built on the OTLP protobuf
// services and gRPC only, so the example needs no Collector.

import (
	"sync"

	"github.com/zaplens/zaplens/internal/otlpview"
)

// backend is an otlpview.Receiver served over OTLP/gRPC on 127.0.0.1.
type backend struct {
	*otlpview.Receiver
	srv *otlpview.Server

	// The service that sent each log record, in arrival order, for the
	// example's test.
	mu   sync.Mutex
	logs []backendLog
}

type backendLog struct {
	resource string // service.name
}

// startBackend listens on 127.0.0.1 on a free port and serves OTLP/gRPC.
func startBackend() (*backend, error) {
	b := &backend{Receiver: &otlpview.Receiver{}}
	b.OnLog = func(l otlpview.Log) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.logs = append(b.logs, backendLog{resource: l.Service})
	}
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

// counts returns how many log records and spans arrived.
func (b *backend) counts() (logs, spans int) { return b.Counts() }
