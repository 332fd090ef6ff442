// Package testsupport holds what the tests of the bridge (package zaplens)
// and of the pipeline (package otlplog) both need: a real OTLP endpoint,
// an in-memory export, a clean environment. Only tests import it.
package testsupport

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testsupport/testcert"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// OTLPServer is a real OTLP/gRPC logs endpoint on loopback, for tests that
// must not depend on the Collector (the integration module tests against
// the Collector's own receiver).
type OTLPServer struct {
	collogpb.UnimplementedLogsServiceServer

	Addr     string
	token    string // when set, "authorization: Bearer <token>" is required
	Reject   int64  // records to reject per request as a partial success
	Srv      *grpc.Server
	Records  atomic.Int64
	Requests atomic.Int64

	Mu       sync.Mutex
	Received []*logpb.ResourceLogs
	keep     bool        // keep the requests' records for inspection
	metadata metadata.MD // the last request's
}

type ServerOption func(*OTLPServer, *[]grpc.ServerOption)

func WithToken(tok string) ServerOption {
	return func(s *OTLPServer, _ *[]grpc.ServerOption) { s.token = tok }
}

func WithServerTLS(cert tls.Certificate) ServerOption {
	return func(_ *OTLPServer, o *[]grpc.ServerOption) {
		*o = append(*o, grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})))
	}
}

func KeepRecords() ServerOption {
	return func(s *OTLPServer, _ *[]grpc.ServerOption) { s.keep = true }
}

// StartOTLPServer serves on addr ("127.0.0.1:0" for any port) until the
// test ends.
func StartOTLPServer(t testing.TB, addr string, opts ...ServerOption) *OTLPServer {
	t.Helper()
	s := &OTLPServer{}
	var gopts []grpc.ServerOption
	for _, o := range opts {
		o(s, &gopts)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = lis.Addr().String()
	s.Srv = grpc.NewServer(gopts...)
	collogpb.RegisterLogsServiceServer(s.Srv, s)
	go func() { _ = s.Srv.Serve(lis) }()
	t.Cleanup(s.Srv.Stop)
	return s
}

func (s *OTLPServer) Export(ctx context.Context, req *collogpb.ExportLogsServiceRequest) (*collogpb.ExportLogsServiceResponse, error) {
	s.Requests.Add(1)
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
	rejected := min(s.Reject, n)
	s.Records.Add(n - rejected)
	s.Mu.Lock()
	s.metadata = md
	if s.keep {
		s.Received = append(s.Received, req.ResourceLogs...)
	}
	s.Mu.Unlock()
	resp := &collogpb.ExportLogsServiceResponse{}
	if rejected > 0 {
		resp.PartialSuccess = &collogpb.ExportLogsPartialSuccess{RejectedLogRecords: rejected, ErrorMessage: "too old"}
	}
	return resp, nil
}

func (s *OTLPServer) Resources() []*logpb.ResourceLogs {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.Received
}

// LastMetadata is the metadata of the last request.
func (s *OTLPServer) LastMetadata() metadata.MD {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	return s.metadata
}

// WaitRecords waits until the server holds n records or d passes.
func (s *OTLPServer) WaitRecords(n int64, d time.Duration) int64 {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && s.Records.Load() < n {
		time.Sleep(5 * time.Millisecond)
	}
	return s.Records.Load()
}

// FreeAddr returns a loopback address nothing listens on, for a collector
// that is down.
func FreeAddr(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestCerts makes a CA and a certificate it signs for 127.0.0.1 and
// localhost, written as PEM into the test's directory.
func TestCerts(t testing.TB) testcert.Files {
	t.Helper()
	f, err := testcert.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return f
}
