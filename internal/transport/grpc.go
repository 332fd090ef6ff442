package transport

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// exportMethod is the full name of the OTLP logs Export method.
const exportMethod = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"

// Connection backoff of the gRPC channel: short, so that a restarted
// collector is found within a few seconds.
var grpcConnectParams = grpc.ConnectParams{
	Backoff: backoff.Config{ // the export's own retry backoff (retry.go)
		BaseDelay:  backoffInitial,
		Multiplier: backoffMultiplier,
		Jitter:     backoffJitter,
		MaxDelay:   backoffMax,
	},
	MinConnectTimeout: connectTimeout,
}

// grpcClient exports over one lazily connected gRPC channel.
type grpcClient struct {
	conn     *grpc.ClientConn
	endpoint string // sanitized, for errors
	bounds   bounds
	dialAddr string // host:port, for the dialer
	lookup   lookupFunc
	onRetry  func(Cause, error)
	insecure bool // plaintext
	proxied  bool // gRPC dials through an HTTPS_PROXY: no probe can reach the endpoint
	md       metadata.MD
	secrets  []string
	opts     []grpc.CallOption
	closed   atomic.Bool
}

// newGRPC makes the client for cfg.Endpoint.
func newGRPC(cfg Config, secrets []string) (*grpcClient, error) {
	e := cfg.Endpoint
	creds := insecure.NewCredentials()
	if e.TLS {
		creds = credentials.NewTLS(tlsConfig(cfg.TLS))
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithConnectParams(grpcConnectParams),
		// Retries are this package's, by the OTLP spec; a service config
		// from the resolver must not add its own.
		grpc.WithDisableServiceConfig(),
		// Every replica a name resolves to takes its share (grpcdns.go).
		grpc.WithDefaultServiceConfig(roundRobin),
		grpc.WithResolvers(dnsResolver{lookup: cfg.lookup, every: cfg.reresolve}),
	}
	if cfg.UserAgent != "" {
		dial = append(dial, grpc.WithUserAgent(cfg.UserAgent))
	}
	conn, err := grpc.NewClient(grpcTarget(e.HostPort()), dial...)
	if err != nil {
		return nil, fmt.Errorf("grpc endpoint %q: %s", e.HostPort(), Sanitize(err.Error(), nil))
	}
	c := &grpcClient{
		conn:     conn,
		endpoint: Sanitize(e.HostPort(), secrets),
		bounds:   bounds{attempt: cfg.Timeout, elapsed: cfg.RetryElapsed},
		onRetry:  cfg.OnRetry,
		dialAddr: e.dialAddr(),
		lookup:   cfg.lookup,
		insecure: !e.TLS,
		proxied:  grpcProxied(e.HostPort()),
		secrets:  secrets,
		// Never WaitForReady: a call that waits for the connection hides
		// why it cannot be made until the timeout, and the first failure
		// must be told at once. A refused connection fails the attempt,
		// which run retries with backoff in Normal mode while gRPC
		// reconnects.
		opts: []grpc.CallOption{grpc.ForceCodecV2(rawCodec{}), grpc.WaitForReady(false)},
	}
	if len(cfg.Headers) > 0 {
		c.md = metadata.New(cfg.Headers)
	}
	if cfg.Gzip {
		c.opts = append(c.opts, grpc.UseCompressor(gzip.Name))
	}
	return c, nil
}

// Export implements Client.
func (c *grpcClient) Export(ctx context.Context, body []byte, n int, mode Mode) Result {
	msg := rawMessage(body)
	if c.md != nil {
		md := c.md
		if out, ok := metadata.FromOutgoingContext(ctx); ok {
			md = metadata.Join(out, c.md)
		}
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	return run(ctx, c.bounds, n, mode, &c.closed, c.onRetry, func(ctx context.Context) attempt {
		var (
			resp collogspb.ExportLogsServiceResponse
			p    peer.Peer
		)
		if err := c.redial(ctx); err != nil {
			if f, ok := classifyConn(err, err.Error(), c.insecure); ok {
				a := f.attempt("grpc", c.endpoint, Sanitize(err.Error(), c.secrets))
				a.status = grpcCodeNames[codes.Unavailable] // as gRPC would say
				return a
			}
		}
		err := c.conn.Invoke(ctx, exportMethod, &msg, &resp, append(c.opts[:len(c.opts):len(c.opts)], grpc.Peer(&p))...)
		if err == nil {
			ps := resp.GetPartialSuccess()
			a := partial(ps.GetRejectedLogRecords(), ps.GetErrorMessage(), n, c.secrets)
			a.status = grpcCodeNames[codes.OK]
			return a
		}
		a := c.classify(err, p.Addr != nil)
		a.status = grpcCodeName(status.Code(err))
		return a
	})
}

// redialWait bounds how long an attempt waits for the dial it starts.
const redialWait = time.Second

// redial makes an attempt a real one when the channel is in transient
// failure: gRPC would otherwise fail the call at once with the error of its
// last dial, and dial again only when its own backoff (up to seconds) ends,
// so a collector that has just come back would go unseen, by a flush above
// all. gRPC keeps the channel in transient failure until a dial succeeds,
// so the endpoint is probed with a plain TCP connection first: refused, the
// attempt fails at once; accepted, gRPC dials now and the attempt waits,
// briefly, for the channel to be ready. It returns the probe's error.
// Where gRPC dials through a proxy, the endpoint may resolve or be reached
// only there: gRPC dials at once, unprobed.
func (c *grpcClient) redial(ctx context.Context) error {
	if c.conn.GetState() != connectivity.TransientFailure {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, redialWait)
	defer cancel()
	if !c.proxied {
		probe, err := dialAny(ctx, c.lookup, c.dialAddr)
		if err != nil {
			return err
		}
		probe.Close()
	}
	c.conn.ResetConnectBackoff()
	for s := c.conn.GetState(); s != connectivity.Ready; s = c.conn.GetState() {
		if !c.conn.WaitForStateChange(ctx, s) {
			break
		}
	}
	return nil
}

// grpcProxied tells whether gRPC dials hostport through a proxy, by the
// rule grpc-go's delegating resolver applies to a target: the proxy
// http.ProxyFromEnvironment gives for https://hostport (HTTPS_PROXY,
// NO_PROXY, never for localhost or a loopback address), read once per
// process, as grpc-go reads it.
func grpcProxied(hostport string) bool {
	u, err := http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "https", Host: hostport}})
	return err == nil && u != nil
}

// dialDetail is the dialer's own error in a gRPC connection error, without
// the words gRPC wraps it in ("connection error: desc = \"transport: Error
// while dialing: ...\""), which name its workings, not the cause.
func dialDetail(detail string) string {
	const wrap = `connection error: desc = "transport: Error while dialing: `
	if d, ok := strings.CutPrefix(detail, wrap); ok {
		return strings.TrimSuffix(d, `"`)
	}
	return detail
}

// classify reads a failed call's status. connected says whether the call
// reached a connection; when it did not, the status is the channel's
// connection error, not a collector's answer.
func (c *grpcClient) classify(err error, connected bool) attempt {
	st := status.Convert(err)
	code, raw := st.Code(), st.Message()
	detail := Sanitize(raw, c.secrets)
	if !connected && (code == codes.Unavailable || code == codes.DeadlineExceeded || code == codes.Canceled) {
		if f, ok := classifyConn(nil, raw, c.insecure); ok {
			return f.attempt("grpc", c.endpoint, dialDetail(detail))
		}
	}
	a := attempt{err: errorf(nil, "grpc export to %s: %s: %s", c.endpoint, code, detail)}
	switch code {
	case codes.Unauthenticated, codes.PermissionDenied:
		a.cause = Unauthenticated
	case codes.DeadlineExceeded:
		a.cause, a.retryable = Timeout, true
		a.err = errorf(context.DeadlineExceeded, "grpc export to %s: %s: %s", c.endpoint, code, detail)
	case codes.Canceled, codes.Aborted, codes.OutOfRange, codes.Unavailable, codes.DataLoss:
		a.cause, a.retryable = Unavailable, true
		a.throttle, _ = retryDelay(st)
	case codes.ResourceExhausted:
		// Retryable only when the server says when to come back.
		if d, ok := retryDelay(st); ok {
			a.cause, a.retryable, a.throttle = Unavailable, true, d
		} else {
			a.cause = Rejected
		}
	default:
		a.cause = Rejected
	}
	return a
}

// retryDelay is the delay of the status's RetryInfo, if it has one.
func retryDelay(st *status.Status) (time.Duration, bool) {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			return min(max(ri.GetRetryDelay().AsDuration(), 0), maxThrottle), true
		}
	}
	return 0, false
}

// Close implements Client.
func (c *grpcClient) Close(ctx context.Context) error {
	if c.closed.Swap(true) {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- c.conn.Close() }()
	select {
	case err := <-done:
		if err != nil {
			return errorf(nil, "closing the grpc connection: %s", Sanitize(err.Error(), c.secrets))
		}
		return nil
	case <-ctx.Done():
		return errorf(ctx.Err(), "closing the grpc connection: %v", ctx.Err())
	}
}

// grpcTarget names the endpoint for gRPC's resolver so that it is dialled
// as given: an IP address, a zoned IPv6 one included, goes straight to the
// dialer, which the DNS resolver would not do for a zone; a name is
// resolved by DNS. The target is a URL, so hostport is written as
// Endpoint.HostPort writes it, a zone escaped: grpc.NewClient refuses
// "[fe80::1%eth0]" and hands the dialer "[fe80::1%25eth0]" unescaped.
func grpcTarget(hostport string) string {
	if _, err := netip.ParseAddrPort(hostport); err == nil {
		return "passthrough:///" + hostport
	}
	return "dns:///" + hostport
}

// rawMessage is an already serialized request.
type rawMessage []byte

// rawCodec sends a *rawMessage as it is and decodes answers as protobuf.
// It is chosen per call (grpc.ForceCodecV2), never registered. Its name
// is "proto", so the content type is application/grpc+proto.
type rawCodec struct{}

// Marshal copies the bytes into a buffer gRPC owns: gRPC may still write
// a message after a canceled call returns, and Export's caller reuses body
// once Export returns.
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*rawMessage)
	if !ok {
		return nil, fmt.Errorf("raw codec cannot marshal %T", v)
	}
	return mem.BufferSlice{mem.Copy(*m, mem.DefaultBufferPool())}, nil
}

// Unmarshal decodes a protobuf answer.
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("raw codec cannot unmarshal into %T", v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return proto.Unmarshal(buf.ReadOnlyData(), m)
}

// Name is the content subtype.
func (rawCodec) Name() string { return "proto" }
