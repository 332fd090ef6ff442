package integration

// The receiver harness: the Collector's otlpreceiver (OTLP/gRPC only), run
// in-process on 127.0.0.1 with a consumertest.LogsSink behind it.
//
//	r := StartReceiver(t)                        // plaintext, free port, started
//	r := StartReceiver(t, WithTLS(), WithBearerToken("s3cret"))
//	r := StartReceiver(t, WithExportDelay(2*time.Second))
//	r := StartReceiver(t, Stopped())              // port reserved, not listening yet
//
//	r.Endpoint()      "127.0.0.1:PORT" (for otlploggrpc.WithEndpoint)
//	r.URL()           "http://127.0.0.1:PORT" or "https://..." (for OTEL_EXPORTER_OTLP_ENDPOINT)
//	r.CAFile()        PEM file of the test CA (WithTLS only; OTEL_EXPORTER_OTLP_CERTIFICATE)
//	r.ClientTLS()     *tls.Config trusting that CA (WithTLS only)
//	r.Start(t) / r.Stop(t) / r.Restart(t)   same port every time; the sink survives restarts
//	r.Count()         log records received so far
//	r.WaitForCount(t, n, timeout) bool      polls until Count() >= n
//	r.Records()       every received record, flattened into Record values, in arrival order
//	r.Exports()       export requests that reached the consumer (after auth)
//	r.AuthFailures()  export requests rejected by the bearer-token check
//	r.Reset()         forget everything received
//
// Everything is stopped by t.Cleanup. All methods are safe for concurrent use.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testcert"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// ReceiverOption configures StartReceiver.
type ReceiverOption func(*receiverConfig)

type receiverConfig struct {
	tls     bool
	token   string
	delay   time.Duration
	stopped bool
}

// WithTLS serves TLS with a certificate for 127.0.0.1/localhost signed by a
// CA generated for this test; files are written to t.TempDir().
func WithTLS() ReceiverOption { return func(c *receiverConfig) { c.tls = true } }

// WithBearerToken makes the receiver require "authorization: Bearer <token>"
// on every export, through the Collector's configauth/extensionauth path.
// Rejected exports fail with codes.Unauthenticated and are counted by
// AuthFailures.
func WithBearerToken(token string) ReceiverOption {
	return func(c *receiverConfig) { c.token = token }
}

// WithExportDelay makes every export take d before it is accepted (a slow
// collector). The receiver keeps the records once the delay has passed.
func WithExportDelay(d time.Duration) ReceiverOption {
	return func(c *receiverConfig) { c.delay = d }
}

// Stopped reserves the port but does not start the receiver; call Start.
func Stopped() ReceiverOption { return func(c *receiverConfig) { c.stopped = true } }

// Receiver is an in-process Collector OTLP/gRPC receiver. See the file
// comment for its API.
type Receiver struct {
	cfg      receiverConfig
	endpoint string
	certs    testcert.Files // WithTLS only

	sink         consumertest.LogsSink
	exports      atomic.Int64
	authFailures atomic.Int64

	mu  sync.Mutex
	rcv receiver.Logs // nil while stopped
}

// StartReceiver builds a receiver on a free loopback port and, unless
// Stopped is given, starts it.
func StartReceiver(t testing.TB, opts ...ReceiverOption) *Receiver {
	t.Helper()
	r := &Receiver{}
	for _, o := range opts {
		o(&r.cfg)
	}
	r.endpoint = freePort(t)
	if r.cfg.tls {
		certs, err := testcert.Write(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		r.certs = certs
	}
	t.Cleanup(func() { r.stop() })
	if !r.cfg.stopped {
		r.Start(t)
	}
	return r
}

// Endpoint is "127.0.0.1:PORT".
func (r *Receiver) Endpoint() string { return r.endpoint }

// URL is the endpoint with its scheme: https when WithTLS, else http.
func (r *Receiver) URL() string {
	if r.cfg.tls {
		return "https://" + r.endpoint
	}
	return "http://" + r.endpoint
}

// CAFile is the PEM file of the CA that signed the server certificate
// (WithTLS only, else "").
func (r *Receiver) CAFile() string { return r.certs.CA }

// ClientTLS is a client TLS config trusting the test CA (WithTLS only, else nil).
func (r *Receiver) ClientTLS() *tls.Config {
	if r.certs.Pool == nil {
		return nil
	}
	return &tls.Config{RootCAs: r.certs.Pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// Start starts the receiver on its port. Starting a running receiver is a
// no-op. It retries briefly if the port is still held by a previous run.
func (r *Receiver) Start(t testing.TB) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rcv != nil {
		return
	}
	var err error
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.rcv, err = r.create()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("start receiver on %s: %v", r.endpoint, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the receiver down (in-flight exports are cut off); what was
// received is kept.
func (r *Receiver) Stop(t testing.TB) {
	t.Helper()
	if err := r.stop(); err != nil {
		t.Fatalf("stop receiver: %v", err)
	}
}

// Restart is Stop then Start on the same port.
func (r *Receiver) Restart(t testing.TB) {
	t.Helper()
	r.Stop(t)
	r.Start(t)
}

func (r *Receiver) stop() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rcv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.rcv.Shutdown(ctx)
	r.rcv = nil
	return err
}

func (r *Receiver) create() (receiver.Logs, error) {
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.HTTP = configoptional.None[otlpreceiver.HTTPConfig]()
	grpcCfg := configgrpc.NewDefaultServerConfig()
	grpcCfg.NetAddr.Endpoint = r.endpoint
	grpcCfg.MaxRecvMsgSizeMiB = 64
	if r.cfg.tls {
		tlsCfg := configtls.NewDefaultServerConfig()
		tlsCfg.CertFile = r.certs.Cert
		tlsCfg.KeyFile = r.certs.Key
		grpcCfg.TLS = configoptional.Some(tlsCfg)
	}
	host := &testHost{ext: map[component.ID]component.Component{}}
	if r.cfg.token != "" {
		id := component.MustNewID("bearertest")
		grpcCfg.Auth = configoptional.Some(configauth.Config{AuthenticatorID: id})
		host.ext[id] = &bearerAuth{want: "Bearer " + r.cfg.token, failures: &r.authFailures}
	}
	cfg.Protocols.GRPC = configoptional.Some(grpcCfg)

	next, err := consumer.NewLogs(func(ctx context.Context, ld plog.Logs) error {
		r.exports.Add(1)
		if r.cfg.delay > 0 {
			select {
			case <-time.After(r.cfg.delay):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return r.sink.ConsumeLogs(ctx, ld)
	})
	if err != nil {
		return nil, err
	}
	set := receivertest.NewNopSettings(f.Type())
	rcv, err := f.CreateLogs(context.Background(), set, cfg, next)
	if err != nil {
		return nil, err
	}
	if err := rcv.Start(context.Background(), host); err != nil {
		_ = rcv.Shutdown(context.Background())
		return nil, err
	}
	return rcv, nil
}

// Count is the number of log records received so far.
func (r *Receiver) Count() int { return r.sink.LogRecordCount() }

// Exports is the number of export requests that passed auth and reached the
// consumer (including ones still being delayed).
func (r *Receiver) Exports() int { return int(r.exports.Load()) }

// AuthFailures is the number of export requests the bearer check rejected.
func (r *Receiver) AuthFailures() int { return int(r.authFailures.Load()) }

// Reset forgets every received record and the export counters.
func (r *Receiver) Reset() {
	r.sink.Reset()
	r.exports.Store(0)
	r.authFailures.Store(0)
}

// WaitForCount polls until at least n records have arrived or timeout
// passes; it reports whether n was reached.
func (r *Receiver) WaitForCount(t testing.TB, n int, timeout time.Duration) bool {
	t.Helper()
	return waitFor(timeout, func() bool { return r.Count() >= n })
}

// waitFor polls cond every 10ms until it holds or timeout passes.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Record is one received log record, flattened. Attribute and resource
// values are pcommon's AsRaw forms: string, bool, int64, float64, []byte,
// []any, map[string]any.
type Record struct {
	Resource     map[string]any
	Scope        string
	ScopeVersion string
	Time         time.Time
	Observed     time.Time
	Severity     int32 // plog.SeverityNumber
	SeverityText string
	Body         any    // Body.AsRaw()
	BodyString   string // Body.AsString()
	Attrs        map[string]any
	TraceID      string // lowercase hex, "" when empty
	SpanID       string // lowercase hex, "" when empty
	Flags        uint32
}

// Records returns every record received so far, in arrival order (and,
// within one export, in the order of the request).
func (r *Receiver) Records() []Record {
	var out []Record
	for _, ld := range r.sink.AllLogs() {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			rl := rls.At(i)
			res := rl.Resource().Attributes().AsRaw()
			sls := rl.ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				sl := sls.At(j)
				lrs := sl.LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					lr := lrs.At(k)
					rec := Record{
						Resource:     res,
						Scope:        sl.Scope().Name(),
						ScopeVersion: sl.Scope().Version(),
						Time:         lr.Timestamp().AsTime(),
						Observed:     lr.ObservedTimestamp().AsTime(),
						Severity:     int32(lr.SeverityNumber()),
						SeverityText: lr.SeverityText(),
						Body:         lr.Body().AsRaw(),
						BodyString:   lr.Body().AsString(),
						Attrs:        lr.Attributes().AsRaw(),
						Flags:        uint32(lr.Flags()),
					}
					if id := lr.TraceID(); !id.IsEmpty() {
						rec.TraceID = id.String()
					}
					if id := lr.SpanID(); !id.IsEmpty() {
						rec.SpanID = id.String()
					}
					out = append(out, rec)
				}
			}
		}
	}
	return out
}

// testHost gives the receiver its auth extension.
type testHost struct {
	ext map[component.ID]component.Component
}

func (h *testHost) GetExtensions() map[component.ID]component.Component { return h.ext }

// bearerAuth is a minimal extensionauth.Server: the header must be exactly want.
type bearerAuth struct {
	want     string
	failures *atomic.Int64
}

func (*bearerAuth) Start(context.Context, component.Host) error { return nil }
func (*bearerAuth) Shutdown(context.Context) error              { return nil }

func (a *bearerAuth) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	for _, v := range headers["authorization"] {
		if v == a.want {
			return ctx, nil
		}
	}
	a.failures.Add(1)
	return ctx, errors.New("missing or wrong bearer token")
}

// freePort returns "127.0.0.1:PORT" for a port that was free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// String is for failure messages.
func (r *Receiver) String() string {
	return fmt.Sprintf("receiver %s (tls=%v auth=%v delay=%v)", r.endpoint, r.cfg.tls, r.cfg.token != "", r.cfg.delay)
}
