package integration

// The receiver harness: the Collector's otlpreceiver, OTLP/gRPC and
// OTLP/HTTP both, run in-process on 127.0.0.1 with its default limits
// (4 MiB per gRPC message, 20 MiB per HTTP body) and a
// consumertest.LogsSink behind it.
//
//	r := StartReceiver(t)                        // plaintext, free ports, started
//	r := StartReceiver(t, WithTLS(), WithBearerToken("s3cret")) // on both protocols
//	r := StartReceiver(t, WithExportDelay(2*time.Second))
//	r := StartReceiver(t, WithAnswerDelay(time.Second)) // stores at once, answers late
//	r := StartReceiver(t, WithConsumeHook(func(call int, ld plog.Logs) error { ... }))
//	r := StartReceiver(t, Stopped())              // ports reserved, not listening yet
//
//	r.Endpoint()      "127.0.0.1:PORT" of gRPC
//	r.URL()           "http://127.0.0.1:PORT" or "https://..." of gRPC
//	r.HTTPEndpoint()  "127.0.0.1:PORT" of OTLP/HTTP
//	r.HTTPURL()       "http://127.0.0.1:PORT" or "https://..." of OTLP/HTTP (no path; /v1/logs serves logs)
//	r.URLFor(p)       URL() or HTTPURL(), for a Proto
//	r.CAFile()        PEM file of the test CA (WithTLS only; OTEL_EXPORTER_OTLP_CERTIFICATE)
//	r.ClientTLS()     *tls.Config trusting that CA (WithTLS only)
//	r.Start(t) / r.Stop(t) / r.Restart(t)   same ports every time; the sink survives restarts
//	r.Count()         log records received (stored) so far
//	r.WaitForCount(t, n, timeout) bool      polls until Count() >= n
//	r.Records()       every stored record, flattened into Record values, in arrival order
//	r.Exports()       export requests that reached the consumer (after auth), stored or not
//	r.Calls()         the same, each with its time, protocol, size and the consumer's answer
//	r.AuthFailures()  export requests rejected by the bearer-token check
//	r.Reset()         forget everything received
//
// Everything is stopped by t.Cleanup. All methods are safe for concurrent use.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/internal/testsupport/testcert"
)

// Proto is an OTLP transport, spelled as WithProtocol and
// OTEL_EXPORTER_OTLP_PROTOCOL spell it.
type Proto string

const (
	GRPC Proto = "grpc"
	HTTP Proto = "http/protobuf"
)

// protos is both transports, for tests that run on each.
var protos = []Proto{GRPC, HTTP}

// Short names a Proto for subtest names.
func (p Proto) Short() string {
	if p == HTTP {
		return "http"
	}
	return "grpc"
}

// ReceiverOption configures StartReceiver.
type ReceiverOption func(*receiverConfig)

type receiverConfig struct {
	tls         bool
	token       string
	delay       time.Duration
	answerDelay time.Duration
	hook        func(call int, md map[string]string, ld plog.Logs) error
	stopped     bool
}

// WithTLS serves TLS, on both protocols, with a certificate for
// 127.0.0.1/localhost signed by a CA generated for this test; files are
// written to t.TempDir().
func WithTLS() ReceiverOption { return func(c *receiverConfig) { c.tls = true } }

// WithBearerToken makes the receiver require "authorization: Bearer <token>"
// on every export, on both protocols, through the Collector's
// configauth/extensionauth path. Rejected exports fail with
// codes.Unauthenticated (gRPC) or 401 (HTTP) and are counted by
// AuthFailures.
func WithBearerToken(token string) ReceiverOption {
	return func(c *receiverConfig) { c.token = token }
}

// WithExportDelay makes every export take d before it is accepted (a slow
// collector). The receiver keeps the records once the delay has passed; an
// export the client gives up on meanwhile is not kept.
func WithExportDelay(d time.Duration) ReceiverOption {
	return func(c *receiverConfig) { c.delay = d }
}

// WithAnswerDelay makes every export store its records at once, then wait
// d before answering, whether or not the client still waits: a collector
// whose answer is slow to come back. A client that gives up and sends
// again delivers the records twice.
func WithAnswerDelay(d time.Duration) ReceiverOption {
	return func(c *receiverConfig) { c.answerDelay = d }
}

// WithConsumeHook calls hook with every export request that reached the
// consumer, numbered from 1 in arrival order, before it is stored. An error
// is the consumer's answer and the records are not stored: the receiver
// turns a status error (google.golang.org/grpc/status) into that gRPC
// code, or its HTTP equivalent (Unavailable 503, ResourceExhausted 429,
// InvalidArgument 400; a RetryInfo detail becomes Retry-After in whole
// seconds), a consumererror.NewPermanent error into Internal (HTTP 500) and
// any other error into Unavailable (HTTP 503).
func WithConsumeHook(hook func(call int, ld plog.Logs) error) ReceiverOption {
	return WithConsumeHookMetadata(func(call int, _ map[string]string, ld plog.Logs) error { return hook(call, ld) })
}

// WithConsumeHookMetadata is WithConsumeHook with the request's headers or
// gRPC metadata too (as Call.Metadata: lower-case keys, first value).
func WithConsumeHookMetadata(hook func(call int, md map[string]string, ld plog.Logs) error) ReceiverOption {
	return func(c *receiverConfig) { c.hook = hook }
}

// Stopped reserves the ports but does not start the receiver; call Start.
func Stopped() ReceiverOption { return func(c *receiverConfig) { c.stopped = true } }

// Call is one export request that reached the consumer.
type Call struct {
	At       time.Time
	Proto    Proto // from the request's content type
	Records  int
	Bytes    int               // the request's size as OTLP protobuf, as the client encoded it (see wireSize)
	First    map[string]any    // the attributes of the request's first record, to tell a retry from the next request
	Err      error             // the consumer's answer; nil: stored
	Metadata map[string]string // request headers / gRPC metadata, lower-case keys, first value
}

// Receiver is an in-process Collector OTLP receiver, gRPC and HTTP. See the
// file comment for its API.
type Receiver struct {
	cfg      receiverConfig
	endpoint string // gRPC
	httpAddr string // HTTP
	certs    testcert.Files

	sink         consumertest.LogsSink
	exports      atomic.Int64
	authFailures atomic.Int64

	callsMu sync.Mutex
	calls   []Call

	mu  sync.Mutex
	rcv receiver.Logs // nil while stopped
}

// StartReceiver builds a receiver on two free loopback ports and, unless
// Stopped is given, starts it.
func StartReceiver(t testing.TB, opts ...ReceiverOption) *Receiver {
	t.Helper()
	r := &Receiver{}
	for _, o := range opts {
		o(&r.cfg)
	}
	r.endpoint = testsupport.FreeAddr(t)
	r.httpAddr = testsupport.FreeAddr(t)
	if r.cfg.tls {
		certs, err := testcert.Write(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		r.certs = certs
	}
	t.Cleanup(func() { _ = r.stop() })
	if !r.cfg.stopped {
		r.Start(t)
	}
	return r
}

// Endpoint is "127.0.0.1:PORT" of the gRPC side.
func (r *Receiver) Endpoint() string { return r.endpoint }

// HTTPEndpoint is "127.0.0.1:PORT" of the HTTP side.
func (r *Receiver) HTTPEndpoint() string { return r.httpAddr }

func (r *Receiver) scheme() string {
	if r.cfg.tls {
		return "https://"
	}
	return "http://"
}

// URL is the gRPC endpoint with its scheme: https when WithTLS, else http.
func (r *Receiver) URL() string { return r.scheme() + r.endpoint }

// HTTPURL is the HTTP endpoint with its scheme and no path: the base URL
// OTEL_EXPORTER_OTLP_ENDPOINT takes, to which /v1/logs is added.
func (r *Receiver) HTTPURL() string { return r.scheme() + r.httpAddr }

// URLFor is URL or HTTPURL.
func (r *Receiver) URLFor(p Proto) string {
	if p == HTTP {
		return r.HTTPURL()
	}
	return r.URL()
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

// Start starts the receiver on its ports. Starting a running receiver is a
// no-op. It retries briefly if a port is still held by a previous run.
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
			t.Fatalf("start receiver on %s and %s: %v", r.endpoint, r.httpAddr, err)
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

// Restart is Stop then Start on the same ports.
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

// create builds and starts the receiver from the factory's default
// configuration; only addresses, TLS and auth are set, so every limit is
// the Collector's default.
func (r *Receiver) create() (receiver.Logs, error) {
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	grpcCfg := cfg.Protocols.GRPC.GetOrInsertDefault()
	httpCfg := cfg.Protocols.HTTP.GetOrInsertDefault()
	grpcCfg.NetAddr.Endpoint = r.endpoint
	httpCfg.ServerConfig.NetAddr.Endpoint = r.httpAddr
	// Metadata tells the calls' protocols apart and shows their headers.
	grpcCfg.IncludeMetadata = true
	httpCfg.ServerConfig.IncludeMetadata = true
	if r.cfg.tls {
		tlsCfg := configtls.NewDefaultServerConfig()
		tlsCfg.CertFile = r.certs.Cert
		tlsCfg.KeyFile = r.certs.Key
		grpcCfg.TLS = configoptional.Some(tlsCfg)
		httpCfg.ServerConfig.TLS = configoptional.Some(tlsCfg)
	}
	host := &testHost{ext: map[component.ID]component.Component{}}
	if r.cfg.token != "" {
		id := component.MustNewID("bearertest")
		grpcCfg.Auth = configoptional.Some(configauth.Config{AuthenticatorID: id})
		httpCfg.ServerConfig.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: id}})
		host.ext[id] = &bearerAuth{want: "Bearer " + r.cfg.token, failures: &r.authFailures}
	}

	next, err := consumer.NewLogs(r.consume)
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

// consume is the receiver's next consumer.
func (r *Receiver) consume(ctx context.Context, ld plog.Logs) error {
	call := Call{At: time.Now(), Records: ld.LogRecordCount(), Bytes: wireSize(ld), Metadata: map[string]string{}}
	info := client.FromContext(ctx)
	for k := range info.Metadata.Keys() {
		if v := info.Metadata.Get(k); len(v) > 0 {
			call.Metadata[strings.ToLower(k)] = v[0]
		}
	}
	if ld.ResourceLogs().Len() > 0 && ld.ResourceLogs().At(0).ScopeLogs().Len() > 0 && ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().Len() > 0 {
		call.First = ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()
	}
	call.Proto = HTTP
	if strings.HasPrefix(call.Metadata["content-type"], "application/grpc") {
		call.Proto = GRPC
	}
	n := int(r.exports.Add(1))
	call.Err = r.answer(ctx, n, call.Metadata, ld)
	r.callsMu.Lock()
	r.calls = append(r.calls, call)
	r.callsMu.Unlock()
	return call.Err
}

func (r *Receiver) answer(ctx context.Context, n int, md map[string]string, ld plog.Logs) error {
	if r.cfg.hook != nil {
		if err := r.cfg.hook(n, md, ld); err != nil {
			return err
		}
	}
	if r.cfg.delay > 0 {
		select {
		case <-time.After(r.cfg.delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := r.sink.ConsumeLogs(ctx, ld)
	if r.cfg.answerDelay > 0 {
		time.Sleep(r.cfg.answerDelay)
	}
	return err
}

var protoSize plog.ProtoMarshaler

// wireSize is the size of ld as an ExportLogsServiceRequest the way zaplens
// encodes it: pdata's own encoding, less the empty trace_id and span_id
// fields (2 bytes each) pdata writes and zaplens leaves out.
func wireSize(ld plog.Logs) int {
	n := protoSize.LogsSize(ld)
	for lr := range logRecords(ld) {
		if lr.TraceID().IsEmpty() {
			n -= 2
		}
		if lr.SpanID().IsEmpty() {
			n -= 2
		}
	}
	return n
}

// logRecords yields every log record of ld, of every resource and scope,
// in the request's order.
func logRecords(ld plog.Logs) iter.Seq[plog.LogRecord] {
	return func(yield func(plog.LogRecord) bool) {
		rls := ld.ResourceLogs()
		for i := range rls.Len() {
			sls := rls.At(i).ScopeLogs()
			for j := range sls.Len() {
				lrs := sls.At(j).LogRecords()
				for k := range lrs.Len() {
					if !yield(lrs.At(k)) {
						return
					}
				}
			}
		}
	}
}

// Count is the number of log records stored so far.
func (r *Receiver) Count() int { return r.sink.LogRecordCount() }

// Exports is the number of export requests that passed auth and reached the
// consumer, stored or refused by the hook (including ones still being
// delayed).
func (r *Receiver) Exports() int { return int(r.exports.Load()) }

// Calls returns the export requests that reached the consumer and were
// answered, in arrival order.
func (r *Receiver) Calls() []Call {
	r.callsMu.Lock()
	defer r.callsMu.Unlock()
	return append([]Call(nil), r.calls...)
}

// AuthFailures is the number of export requests the bearer check rejected.
func (r *Receiver) AuthFailures() int { return int(r.authFailures.Load()) }

// Reset forgets every received record, call and counter.
func (r *Receiver) Reset() {
	r.sink.Reset()
	r.exports.Store(0)
	r.authFailures.Store(0)
	r.callsMu.Lock()
	r.calls = nil
	r.callsMu.Unlock()
}

// WaitForCount polls until at least n records have arrived or timeout
// passes; it reports whether n was reached.
func (r *Receiver) WaitForCount(t testing.TB, n int, timeout time.Duration) bool {
	t.Helper()
	return testsupport.Eventually(timeout, func() bool { return r.Count() >= n })
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

// bearerAuth is a minimal extensionauth.Server: the authorization header
// (gRPC metadata key or HTTP header, in any case) must be exactly want.
type bearerAuth struct {
	want     string
	failures *atomic.Int64
}

func (*bearerAuth) Start(context.Context, component.Host) error { return nil }
func (*bearerAuth) Shutdown(context.Context) error              { return nil }

func (a *bearerAuth) Authenticate(ctx context.Context, headers map[string][]string) (context.Context, error) {
	for k, vs := range headers {
		if !strings.EqualFold(k, "authorization") {
			continue
		}
		for _, v := range vs {
			if v == a.want {
				return ctx, nil
			}
		}
	}
	a.failures.Add(1)
	return ctx, errors.New("missing or wrong bearer token")
}

// String is for failure messages.
func (r *Receiver) String() string {
	return fmt.Sprintf("receiver grpc %s http %s (tls=%v auth=%v delay=%v)", r.endpoint, r.httpAddr, r.cfg.tls, r.cfg.token != "", r.cfg.delay)
}
