package transport

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
)

// BenchmarkExport is one Export of 100 records to a collector on this
// machine, named "localhost" as a fleet names its tier, so that the
// transport resolves the name: what each export costs, the collector's
// work included. The collectors keep nothing.
//
//	go test -run '^$' -bench Export -benchmem -count 6 ./internal/transport
func BenchmarkExport(b *testing.B) {
	_, body := testRequest(b, 100)
	b.Run("grpc", func(b *testing.B) {
		l := loopback(b)
		s := grpc.NewServer()
		collogspb.RegisterLogsServiceServer(s, discard{})
		go func() { _ = s.Serve(l) }()
		b.Cleanup(s.Stop)
		benchExport(b, grpcConfig(localhost(l)), body)
	})
	b.Run("http", func(b *testing.B) {
		l := loopback(b)
		s := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		})}}
		s.Start()
		b.Cleanup(s.Close)
		benchExport(b, httpConfig("http://"+localhost(l)), body)
	})
}

// discard is a LogsService that takes every request and keeps nothing.
type discard struct {
	collogspb.UnimplementedLogsServiceServer
}

func (discard) Export(context.Context, *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// localhost is "localhost:port" for l's port.
func localhost(l net.Listener) string {
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return net.JoinHostPort("localhost", port)
}

func benchExport(b *testing.B, cfg Config, body []byte) {
	c := newClient(b, cfg)
	if r, _ := export(c, body, 100, Normal); r.Err != nil {
		b.Fatalf("first export: %+v", r)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := export(c, body, 100, Normal); r.Err != nil {
			b.Fatalf("export: %+v", r)
		}
	}
}
