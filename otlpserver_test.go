package zaplens

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testcert"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// otlpServer is a real OTLP/gRPC logs endpoint on loopback, for tests that
// must not depend on the Collector (the integration module tests against
// the Collector's own receiver).
type otlpServer struct {
	collogpb.UnimplementedLogsServiceServer

	addr     string
	token    string // when set, "authorization: Bearer <token>" is required
	reject   int64  // records to reject per request as a partial success
	srv      *grpc.Server
	records  atomic.Int64
	requests atomic.Int64

	mu       sync.Mutex
	received []*logpb.ResourceLogs
	keep     bool        // keep the requests' records for inspection
	metadata metadata.MD // the last request's
}

type serverOption func(*otlpServer, *[]grpc.ServerOption)

func withToken(tok string) serverOption {
	return func(s *otlpServer, _ *[]grpc.ServerOption) { s.token = tok }
}

func withServerTLS(cert tls.Certificate) serverOption {
	return func(_ *otlpServer, o *[]grpc.ServerOption) {
		*o = append(*o, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	}
}

func keepRecords() serverOption {
	return func(s *otlpServer, _ *[]grpc.ServerOption) { s.keep = true }
}

// startOTLPServer serves on addr ("127.0.0.1:0" for any port) until the
// test ends.
func startOTLPServer(t testing.TB, addr string, opts ...serverOption) *otlpServer {
	t.Helper()
	s := &otlpServer{}
	var gopts []grpc.ServerOption
	for _, o := range opts {
		o(s, &gopts)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.addr = lis.Addr().String()
	s.srv = grpc.NewServer(gopts...)
	collogpb.RegisterLogsServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(lis) }()
	t.Cleanup(s.srv.Stop)
	return s
}

func (s *otlpServer) Export(ctx context.Context, req *collogpb.ExportLogsServiceRequest) (*collogpb.ExportLogsServiceResponse, error) {
	s.requests.Add(1)
	md, _ := metadata.FromIncomingContext(ctx)
	if s.token != "" {
		if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+s.token {
			return nil, status.Error(codes.Unauthenticated, "bad token")
		}
	}
	var n int64
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			n += int64(len(sl.LogRecords))
		}
	}
	rejected := min(s.reject, n)
	s.records.Add(n - rejected)
	s.mu.Lock()
	s.metadata = md
	if s.keep {
		s.received = append(s.received, req.ResourceLogs...)
	}
	s.mu.Unlock()
	resp := &collogpb.ExportLogsServiceResponse{}
	if rejected > 0 {
		resp.PartialSuccess = &collogpb.ExportLogsPartialSuccess{RejectedLogRecords: rejected, ErrorMessage: "too old"}
	}
	return resp, nil
}

func (s *otlpServer) resources() []*logpb.ResourceLogs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

// lastMetadata is the metadata of the last request.
func (s *otlpServer) lastMetadata() metadata.MD {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.metadata
}

// waitRecords waits until the server holds n records or d passes.
func (s *otlpServer) waitRecords(n int64, d time.Duration) int64 {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && s.records.Load() < n {
		time.Sleep(5 * time.Millisecond)
	}
	return s.records.Load()
}

// freeAddr returns a loopback address nothing listens on, for a collector
// that is down.
func freeAddr(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// testCerts makes a CA and a certificate it signs for 127.0.0.1 and
// localhost, written as PEM into the test's directory.
func testCerts(t testing.TB) testcert.Files {
	t.Helper()
	f, err := testcert.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return f
}
