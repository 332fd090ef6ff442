package transport

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testsupport/testcert"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
)

// collector is a test LogsService: it records requests, checks the bearer
// token, and answers as handle says.
type collector struct {
	collogspb.UnimplementedLogsServiceServer
	calls atomic.Int32
	requestLog
	mds    []metadata.MD
	comp   []string // compression of each request, from the stats handler
	wire   []int    // size of each request as it came, from the stats handler
	handle func(ctx context.Context, call int) (*collogspb.ExportLogsServiceResponse, error)
}

func (c *collector) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	call := int(c.calls.Add(1))
	md, _ := metadata.FromIncomingContext(ctx)
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mds = append(c.mds, md)
	c.mu.Unlock()
	if got := md.Get("authorization"); len(got) != 1 || got[0] != authValue {
		return nil, status.Error(codes.Unauthenticated, "bad token "+strings.Join(got, ","))
	}
	if c.handle != nil {
		return c.handle(ctx, call)
	}
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// TagRPC, HandleRPC, TagConn and HandleConn make collector a stats.Handler
// that records the compression and the size of each request.
func (c *collector) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (c *collector) HandleRPC(_ context.Context, s stats.RPCStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s := s.(type) {
	case *stats.InHeader:
		c.comp = append(c.comp, s.Compression)
	case *stats.InPayload:
		c.wire = append(c.wire, s.CompressedLength)
	}
}
func (c *collector) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *collector) HandleConn(context.Context, stats.ConnStats)                       {}

// serve runs c on l until the test ends.
func (c *collector) serve(t testing.TB, l net.Listener, opts ...grpc.ServerOption) *grpc.Server {
	t.Helper()
	s := grpc.NewServer(append(opts, grpc.StatsHandler(c))...)
	collogspb.RegisterLogsServiceServer(s, c)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return s
}

// start runs c on a fresh loopback port and returns its address.
func (c *collector) start(t testing.TB, opts ...grpc.ServerOption) string {
	t.Helper()
	l := loopback(t)
	c.serve(t, l, opts...)
	return l.Addr().String()
}

func grpcConfig(addr string) Config {
	return Config{
		Protocol:  GRPC,
		Endpoint:  endpointOf(addr, GRPC),
		Headers:   map[string]string{"authorization": authValue},
		UserAgent: "zaplens-test/1.0",
		Timeout:   5 * time.Second,
	}
}

// statusWith is a status carrying a RetryInfo delay.
func statusWith(t testing.TB, code codes.Code, msg string, delay time.Duration) error {
	t.Helper()
	st, err := status.New(code, msg).WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

func tlsServerCreds(t testing.TB) (grpc.ServerOption, testcert.Files) {
	t.Helper()
	files, err := testcert.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{files.Pair}, MinVersion: tls.VersionTLS12})), files
}

func TestGRPCDeliversBytesIntact(t *testing.T) {
	t.Parallel()
	col := &collector{}
	addr := col.start(t)
	c := newClient(t, grpcConfig(addr))
	req, body := testRequest(t, 25)
	r, _ := export(c, body, 25, Normal)
	if r.Err != nil || r.Cause != Delivered || r.Rejected != 0 || r.Attempts != 1 {
		t.Fatalf("result %+v, want delivered in one attempt", r)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.reqs) != 1 || !proto.Equal(col.reqs[0], req) {
		t.Fatalf("collector got %d requests, first equal: %v", len(col.reqs), len(col.reqs) == 1 && proto.Equal(col.reqs[0], req))
	}
	if ua := col.mds[0].Get("user-agent"); len(ua) != 1 || !strings.HasPrefix(ua[0], "zaplens-test/1.0") {
		t.Errorf("user-agent %q", ua)
	}
	if ct := col.mds[0].Get("content-type"); len(ct) != 1 || ct[0] != "application/grpc+proto" && ct[0] != "application/grpc" {
		t.Errorf("content-type %q", ct)
	}
	if col.comp[0] != "" {
		t.Errorf("compression %q without Gzip", col.comp[0])
	}
}

func TestGRPCUnauthenticated(t *testing.T) {
	t.Parallel()
	for _, code := range []codes.Code{codes.Unauthenticated, codes.PermissionDenied} {
		col := &collector{handle: func(context.Context, int) (*collogspb.ExportLogsServiceResponse, error) {
			return nil, status.Error(code, "no")
		}}
		cfg := grpcConfig(col.start(t))
		c := newClient(t, cfg)
		_, body := testRequest(t, 3)
		r, _ := export(c, body, 3, Normal)
		if r.Cause != Unauthenticated || r.Attempts != 1 || r.Rejected != 3 || r.Err == nil {
			t.Errorf("%v: result %+v", code, r)
		}
	}
	// A wrong token: the collector's message echoes it, and it is redacted.
	col := &collector{}
	cfg := grpcConfig(col.start(t))
	cfg.Headers = map[string]string{"authorization": "Bearer wrong-token-value"}
	c := newClient(t, cfg)
	_, body := testRequest(t, 3)
	r, _ := export(c, body, 3, Final)
	if r.Cause != Unauthenticated || r.Attempts != 1 {
		t.Fatalf("result %+v", r)
	}
	if strings.Contains(r.Err.Error(), "wrong-token-value") || !strings.Contains(r.Err.Error(), Redacted) {
		t.Errorf("error not redacted: %q", r.Err)
	}
}

func TestGRPCRejectedIsNotRetriedAndSanitized(t *testing.T) {
	t.Parallel()
	col := &collector{handle: func(context.Context, int) (*collogspb.ExportLogsServiceResponse, error) {
		return nil, status.Error(codes.InvalidArgument, "bad record\nforged line \x1b[31mred "+authValue)
	}}
	c := newClient(t, grpcConfig(col.start(t)))
	_, body := testRequest(t, 7)
	r, _ := export(c, body, 7, Normal)
	if r.Cause != Rejected || r.Attempts != 1 || r.Rejected != 7 || col.calls.Load() != 1 {
		t.Fatalf("result %+v, calls %d", r, col.calls.Load())
	}
	checkClean(t, r.Err)
	for _, want := range []string{`bad record\nforged line \x1b[31mred`, Redacted, "InvalidArgument"} {
		if !strings.Contains(r.Err.Error(), want) {
			t.Errorf("error %q lacks %q", r.Err, want)
		}
	}
}

// Each status is retried or not as the OTLP spec says, after the delay a
// RetryInfo asks for; TestRetries sees retries made.
func TestGRPCStatusClassified(t *testing.T) {
	c := &grpcClient{endpoint: "collector:4317"}
	for _, tt := range []struct {
		err       error
		cause     Cause
		retryable bool
		throttle  time.Duration
	}{
		{status.Error(codes.Unavailable, "busy"), Unavailable, true, 0},
		{statusWith(t, codes.Unavailable, "busy", time.Second), Unavailable, true, time.Second},
		{statusWith(t, codes.Unavailable, "busy", 1000*time.Hour), Unavailable, true, maxThrottle},
		// Retryable only when the server says when to come back.
		{statusWith(t, codes.ResourceExhausted, "slow down", 200*time.Millisecond), Unavailable, true, 200 * time.Millisecond},
		{status.Error(codes.ResourceExhausted, "too big"), Rejected, false, 0},
		{status.Error(codes.Aborted, "again"), Unavailable, true, 0},
		{status.Error(codes.DataLoss, "lost"), Unavailable, true, 0},
		{status.Error(codes.DeadlineExceeded, "slow"), Timeout, true, 0},
		{status.Error(codes.Internal, "bug"), Rejected, false, 0},
		{status.Error(codes.Unimplemented, "no logs"), Rejected, false, 0},
		{status.Error(codes.PermissionDenied, "no"), Unauthenticated, false, 0},
	} {
		a := c.classify(tt.err, true)
		if a.cause != tt.cause || a.retryable != tt.retryable || a.throttle != tt.throttle || a.err == nil {
			t.Errorf("%v: %v, retryable %v, throttle %v, err %v; want %v, %v, %v", tt.err, a.cause, a.retryable, a.throttle, a.err, tt.cause, tt.retryable, tt.throttle)
		}
	}
}

func TestGRPCPartialSuccess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rejected int64
		msg      string
		want     int64
		cause    Cause
		err      string
	}{
		{3, "quota\nexceeded " + authValue, 3, PartialSuccess, `rejected 3 of 10 log records: quota\nexceeded ` + Redacted},
		{-5, "", 0, Delivered, ""},
		{-5, "odd", 0, PartialSuccess, "warning: odd"},
		{0, "", 0, Delivered, ""},
		{0, "deprecated field", 0, PartialSuccess, "accepted all 10 log records with a warning: deprecated field"},
		{1 << 40, "", 10, PartialSuccess, "rejected 10 of 10"},
		{-1 << 63, "min", 0, PartialSuccess, "warning: min"},
	}
	for _, tt := range tests {
		col := &collector{handle: func(context.Context, int) (*collogspb.ExportLogsServiceResponse, error) {
			return &collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{
				RejectedLogRecords: tt.rejected, ErrorMessage: tt.msg,
			}}, nil
		}}
		c := newClient(t, grpcConfig(col.start(t)))
		_, body := testRequest(t, 10)
		r, _ := export(c, body, 10, Normal)
		if r.Rejected != tt.want || r.Cause != tt.cause || r.Attempts != 1 {
			t.Errorf("rejected %d %q: result %+v", tt.rejected, tt.msg, r)
		}
		if (tt.err == "") != (r.Err == nil) || r.Err != nil && !strings.Contains(r.Err.Error(), tt.err) {
			t.Errorf("rejected %d %q: err %v, want %q", tt.rejected, tt.msg, r.Err, tt.err)
		}
		checkClean(t, r.Err)
	}
}

func TestGRPCUnknownHostIsRefused(t *testing.T) {
	t.Parallel()
	cfg := grpcConfig("collector.invalid:4317")
	cfg.Timeout, cfg.RetryElapsed = 3*time.Second, 3*time.Second
	c := newClient(t, cfg)
	_, body := testRequest(t, 2)
	r, took := export(c, body, 2, Final)
	within(t, "export", took, 4*time.Second)
	if r.Cause == Timeout {
		t.Skipf("the resolver did not answer in time: %v", r.Err)
	}
	if r.Cause != Refused || r.Attempts != 1 {
		t.Fatalf("result %+v", r)
	}
}

// TestGRPCFindsARestartedCollector stops the collector, sees Final fail at
// once, restarts it on the same port, and sees a Normal export get through
// within a few seconds.
func TestGRPCFindsARestartedCollector(t *testing.T) {
	t.Parallel()
	col := &collector{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	srv := col.serve(t, l)
	cfg := grpcConfig(addr)
	cfg.Timeout, cfg.RetryElapsed = 8*time.Second, 8*time.Second
	c := newClient(t, cfg)
	_, body := testRequest(t, 2)
	if r, _ := export(c, body, 2, Normal); r.Cause != Delivered {
		t.Fatalf("first export: %+v", r)
	}
	srv.Stop()
	// The channel notices the loss; a Final export then fails at once.
	deadline := time.Now().Add(3 * time.Second)
	for {
		r, took := export(c, body, 2, Final)
		within(t, "final export", took, time.Second)
		if r.Cause == Refused {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("final export after stop: %+v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var l2 net.Listener
	for range 50 {
		if l2, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	col.serve(t, l2)
	r, took := export(c, body, 2, Normal)
	if r.Cause != Delivered {
		t.Fatalf("export after restart: %+v", r)
	}
	within(t, "export after restart", took, 6*time.Second)
}

// An endpoint is dialled as written: addresses, zoned IPv6 ones included,
// without a resolver that could read them otherwise; names through DNS.
func TestGRPCTarget(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:4317":        "passthrough:///127.0.0.1:4317",
		"[::1]:4317":            "passthrough:///[::1]:4317",
		"[fe80::1%25eth0]:4317": "passthrough:///[fe80::1%25eth0]:4317",
		"collector.local:4317":  "dns:///collector.local:4317",
	} {
		if got := grpcTarget(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
