package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/testsupport"
)

// What both transports must do alike, asked of each.

// requestLog is what both test collectors keep of the requests they
// receive; mu guards the rest of each collector's records too.
type requestLog struct {
	mu   sync.Mutex
	reqs []*collogspb.ExportLogsServiceRequest
}

// received is a copy of the requests so far.
func (l *requestLog) received() []*collogspb.ExportLogsServiceRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// reply is a test collector's answer to one call, in terms both
// transports have.
type reply struct {
	kind replyKind
	// after is the retry delay a retryable reply asks for: a RetryInfo, or
	// a Retry-After in whole seconds.
	after time.Duration
}

type replyKind int

const (
	accept    replyKind = iota
	retryable           // gRPC Unavailable; HTTP 503, or 429 with a delay
	rejected            // gRPC InvalidArgument; HTTP 400
	hang                // no answer until the call ends
)

// answers replies to call i (from 1) with rs[i-1], and to later calls as
// to the last.
func answers(rs ...reply) func(call int) reply {
	return func(call int) reply { return rs[min(call, len(rs))-1] }
}

// served is a test collector of either transport, as these tests see it.
type served struct {
	cfg      Config
	calls    func() int
	received func() []*collogspb.ExportLogsServiceRequest
	// wire is how request i came: its content encoding ("" for none) and
	// its size.
	wire func(i int) (encoding string, size int)
	// kill stops the collector as a process that dies does: its listener
	// closed, its connections reset, requests in flight unanswered.
	kill func()
	// drain stops it gracefully, as a rolling restart does: no new
	// requests, those in flight answered, then the connections closed
	// (gRPC's GOAWAY, HTTP's Shutdown).
	drain func()
}

// transportCase is one transport, as these tests reach it.
type transportCase struct {
	name string
	// refused is a configuration for an endpoint nobody listens on, and
	// that endpoint as the hints name it.
	refused func(t *testing.T) (Config, string)
	// serve runs a collector on l, answering each call as answer says.
	serve func(t *testing.T, l net.Listener, answer func(call int) reply) served
	// tls is a configuration for a collector serving TLS with a test CA's
	// certificate, which cfg.TLS trusts, and the requests it has received.
	tls func(t *testing.T) (Config, func() []*collogspb.ExportLogsServiceRequest)
	// closeEndsExports says whether Close ends an export in flight at
	// once; without it the export ends by its own timeout.
	closeEndsExports bool
}

var transportCases = []transportCase{
	{
		name: "grpc",
		refused: func(t *testing.T) (Config, string) {
			addr := closedAddr(t)
			return grpcConfig(addr), addr
		},
		serve: func(t *testing.T, l net.Listener, answer func(int) reply) served {
			col := &collector{handle: func(ctx context.Context, call int) (*collogspb.ExportLogsServiceResponse, error) {
				return grpcReply(ctx, t, answer(call))
			}}
			// Flow-control windows as large as the largest request: the
			// client sends as far ahead as the kernel lets it, as over a
			// link with a large bandwidth-delay product, which
			// TestBodyIsLeftOnReturn needs.
			srv := col.serve(t, l, grpc.MaxRecvMsgSize(bigBody), grpc.InitialWindowSize(2*bigBody), grpc.InitialConnWindowSize(2*bigBody))
			return served{
				kill:     srv.Stop,
				drain:    srv.GracefulStop,
				cfg:      grpcConfig(l.Addr().String()),
				calls:    func() int { return int(col.calls.Load()) },
				received: col.received,
				wire: func(i int) (string, int) {
					col.mu.Lock()
					defer col.mu.Unlock()
					return col.comp[i], col.wire[i]
				},
			}
		},
		tls: func(t *testing.T) (Config, func() []*collogspb.ExportLogsServiceRequest) {
			creds, files := tlsServerCreds(t)
			col := &collector{}
			cfg := grpcConfig(col.start(t, creds))
			cfg.Endpoint.TLS = true
			cfg.TLS = &tls.Config{RootCAs: files.Pool}
			return cfg, col.received
		},
		closeEndsExports: true,
	},
	{
		name: "http",
		refused: func(t *testing.T) (Config, string) {
			addr := closedAddr(t)
			return httpConfig("http://" + addr), addr
		},
		serve: func(t *testing.T, l net.Listener, answer func(int) reply) served {
			col := &httpCollector{maxBody: bigBody, handle: func(w http.ResponseWriter, r *http.Request, call int) {
				httpReply(w, r, answer(call))
			}}
			srv := col.serve(t, l)
			return served{
				kill: func() {
					srv.Listener.Close()
					srv.CloseClientConnections()
				},
				drain:    func() { _ = srv.Config.Shutdown(context.Background()) },
				cfg:      httpConfig(srv.URL),
				calls:    func() int { return int(col.calls.Load()) },
				received: col.received,
				wire: func(i int) (string, int) {
					col.mu.Lock()
					defer col.mu.Unlock()
					return col.hdrs[i].Get("Content-Encoding"), len(col.raw[i])
				},
			}
		},
		tls: func(t *testing.T) (Config, func() []*collogspb.ExportLogsServiceRequest) {
			col := &httpCollector{}
			srv, files := col.startTLS(t)
			cfg := httpConfig(srv.URL)
			cfg.TLS = &tls.Config{RootCAs: files.Pool}
			return cfg, col.received
		},
	},
}

// grpcReply is r as the gRPC collector answers it.
func grpcReply(ctx context.Context, t testing.TB, r reply) (*collogspb.ExportLogsServiceResponse, error) {
	switch r.kind {
	case retryable:
		if r.after > 0 {
			return nil, statusWith(t, codes.Unavailable, "busy", r.after)
		}
		return nil, status.Error(codes.Unavailable, "busy")
	case rejected:
		return nil, status.Error(codes.InvalidArgument, "bad request")
	case hang:
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// httpReply is r as the HTTP collector answers it.
func httpReply(w http.ResponseWriter, req *http.Request, r reply) {
	switch r.kind {
	case retryable:
		if r.after > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(r.after/time.Second)))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	case rejected:
		w.WriteHeader(http.StatusBadRequest)
	case hang:
		select {
		case <-req.Context().Done():
		case <-time.After(10 * time.Second):
		}
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// eachTransport runs test on each transport, in parallel.
func eachTransport(t *testing.T, test func(t *testing.T, tc transportCase)) {
	t.Parallel()
	for _, tc := range transportCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			test(t, tc)
		})
	}
}

// TLS with a CA of the caller's delivers the request intact and leaves the
// caller's tls.Config as it was; the system roots, which do not trust the
// test CA, make a failure that is neither a mismatch nor retried.
func TestTLS(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		cfg, received := tc.tls(t)
		c := newClient(t, cfg)
		req, body := testRequest(t, 3)
		if r, _ := export(c, body, 3, Normal); r.Err != nil || r.Cause != Delivered {
			t.Fatalf("result %+v", r)
		}
		if got := received(); len(got) != 1 || !proto.Equal(got[0], req) {
			t.Error("request changed on the way")
		}
		if cfg.TLS.NextProtos != nil || cfg.TLS.MinVersion != 0 {
			t.Error("the caller's tls.Config was changed")
		}

		cfg.TLS = nil
		c = newClient(t, cfg)
		r, took := export(c, body, 3, Normal)
		within(t, "export", took, 2*time.Second)
		if r.Cause != Other || r.Attempts != 1 || r.Err == nil || !strings.Contains(r.Err.Error(), "certificate") {
			t.Errorf("untrusted certificate: result %+v", r)
		}
	})
}

// TLS spoken to a plaintext server, or plaintext to a TLS one, fails at
// once, not retried after a backoff, with a hint that names the scheme to
// use. Plaintext gRPC to a TLS server reads as a preface cut short, which
// a restarting collector gives too: that one is tried once more at once.
func TestTLSMismatch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		// endpoint is a collector's configuration with TLS the wrong way.
		endpoint func(t *testing.T, tc transportCase) Config
		hint     string
	}{
		{"tls client, plaintext server", func(t *testing.T, tc transportCase) Config {
			return withTLS(tc.serve(t, loopback(t), answers(reply{})).cfg, true)
		}, "http://host:port"},
		{"plaintext client, tls server", func(t *testing.T, tc transportCase) Config {
			cfg, _ := tc.tls(t)
			return withTLS(cfg, false)
		}, "https://"},
	} {
		for _, mode := range []Mode{Normal, Final} {
			t.Run(tt.name+"/"+mode.String(), func(t *testing.T) {
				eachTransport(t, func(t *testing.T, tc transportCase) {
					cfg := tt.endpoint(t, tc)
					cfg.Timeout, cfg.RetryElapsed = time.Second, time.Second
					c := newClient(t, cfg)
					_, body := testRequest(t, 2)
					r, took := export(c, body, 2, mode)
					within(t, "export", took, 2*time.Second)
					attempts := 1
					if tc.name == "grpc" && !cfg.Endpoint.TLS {
						attempts = 2
					}
					if r.Cause != TLSMismatch || r.Attempts != attempts || r.Rejected != 2 {
						t.Fatalf("result %+v", r)
					}
					if h := r.Cause.Hint(written(cfg.Endpoint)); !strings.Contains(h, tt.hint) {
						t.Errorf("hint %q", h)
					}
				})
			})
		}
	}
}

// withTLS is cfg with TLS on or off, on either transport.
func withTLS(cfg Config, on bool) Config {
	cfg.Endpoint.TLS = on
	return cfg
}

// written is e as a user writes it, with the scheme that says TLS or not.
func written(e Endpoint) string {
	if e.TLS {
		return "https://" + e.HostPort()
	}
	return "http://" + e.HostPort()
}

func TestFinalRefusedFailsAtOnce(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		cfg, addr := tc.refused(t)
		c := newClient(t, cfg)
		_, body := testRequest(t, 9)
		r, took := export(c, body, 9, Final)
		within(t, "export", took, time.Second)
		if r.Cause != Refused || r.Attempts != 1 || r.Rejected != 9 || r.Err == nil {
			t.Fatalf("result %+v", r)
		}
		if msg := r.Err.Error(); !strings.Contains(msg, "connection refused") ||
			strings.Contains(msg, "desc =") || strings.Contains(msg, "Error while dialing") {
			t.Errorf("error %q: want the cause in words, without gRPC's wrapping", msg)
		}
		if h := r.Cause.Hint(addr); !strings.Contains(h, addr) {
			t.Errorf("hint %q does not name %s", h, addr)
		}
	})
}

func TestNormalRefusedRetriesUntilTheTimeout(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		cfg, _ := tc.refused(t)
		cfg.Timeout, cfg.RetryElapsed = 2*time.Second, 2*time.Second
		c := newClient(t, cfg)
		_, body := testRequest(t, 4)
		r, took := export(c, body, 4, Normal)
		within(t, "export", took, 3500*time.Millisecond)
		if r.Cause != Refused || r.Rejected != 4 || r.Attempts < 2 || took < time.Second {
			t.Fatalf("result %+v after %v: want retries until the next one would pass the 2 s timeout", r, took)
		}
	})
}

// A collector that never answers makes an export fail at its bound, the
// timeout or the context's deadline, whichever is sooner.
func TestSlowCollectorTimesOut(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		mode        Mode
		timeout     time.Duration
		ctxDeadline time.Duration // 0: none
		bound       time.Duration
	}{
		{"normal", Normal, 800 * time.Millisecond, 0, 800 * time.Millisecond},
		{"final", Final, 800 * time.Millisecond, 0, 800 * time.Millisecond},
		{"context deadline", Normal, 5 * time.Second, 300 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachTransport(t, func(t *testing.T, tc transportCase) {
				s := tc.serve(t, loopback(t), answers(reply{kind: hang}))
				s.cfg.Timeout, s.cfg.RetryElapsed = tt.timeout, tt.timeout
				c := newClient(t, s.cfg)
				_, body := testRequest(t, 5)
				ctx := context.Background()
				if tt.ctxDeadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.ctxDeadline)
					defer cancel()
				}
				start := time.Now()
				r := c.Export(ctx, body, 5, tt.mode)
				took := time.Since(start)
				within(t, "export", took, tt.bound+1200*time.Millisecond)
				if took < tt.bound-100*time.Millisecond {
					t.Errorf("gave up after %v, before the bound", took)
				}
				if r.Cause != Timeout || r.Rejected != 5 || !errors.Is(r.Err, context.DeadlineExceeded) {
					t.Errorf("result %+v", r)
				}
			})
		})
	}
}

// eachCompression runs test on each transport, with gzip and without, with
// a client of a collector that accepts every request.
func eachCompression(t *testing.T, test func(t *testing.T, c Client, s served, gzip bool)) {
	t.Parallel()
	for _, gzip := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", gzip), func(t *testing.T) {
			eachTransport(t, func(t *testing.T, tc transportCase) {
				s := tc.serve(t, loopback(t), answers(reply{}))
				s.cfg.Gzip = gzip
				test(t, newClient(t, s.cfg), s, gzip)
			})
		})
	}
}

// Requests reach the collector intact, compressed with gzip when asked
// and only then.
func TestCompression(t *testing.T) {
	eachCompression(t, func(t *testing.T, c Client, s served, gzip bool) {
		req, body := testRequest(t, 50)
		if r, _ := export(c, body, 50, Normal); r.Err != nil || r.Cause != Delivered {
			t.Fatalf("result %+v", r)
		}
		if got := s.received(); len(got) != 1 || !proto.Equal(got[0], req) {
			t.Error("request changed on the way")
		}
		enc, size := s.wire(0)
		if gzip && (enc != "gzip" || size >= len(body)) || !gzip && (enc != "" || size != len(body)) {
			t.Errorf("came with encoding %q in %d bytes, for %d", enc, size, len(body))
		}
	})
}

// A retryable answer is retried after the backoff or the delay the
// collector asks for, resending the same request, in Final mode too (the
// collector is up), until the timeout; a delay past the deadline is not
// waited for, and a rejection is not retried.
func TestRetries(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name             string
		replies          []reply
		mode             Mode
		timeout          time.Duration
		attempts         int
		cause            Cause
		minTook, maxTook time.Duration
	}{
		{"retryable, then accepted", []reply{{kind: retryable}, {}}, Normal, 3 * time.Second, 2, Delivered, 300 * time.Millisecond, 2 * time.Second},
		{"delay asked for", []reply{{kind: retryable, after: time.Second}, {}}, Final, 3 * time.Second, 2, Delivered, 950 * time.Millisecond, 2500 * time.Millisecond},
		{"delay past the deadline", []reply{{kind: retryable, after: time.Minute}}, Normal, 3 * time.Second, 1, Unavailable, 0, time.Second},
		{"not retryable", []reply{{kind: rejected}, {}}, Normal, 3 * time.Second, 1, Rejected, 0, time.Second},
		// Waits of 400-600ms, then 640-960ms: the third would pass 1s.
		{"retries run out", []reply{{kind: retryable}}, Final, time.Second, 2, Unavailable, 300 * time.Millisecond, 2500 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachTransport(t, func(t *testing.T, tc transportCase) {
				s := tc.serve(t, loopback(t), answers(tt.replies...))
				s.cfg.Timeout, s.cfg.RetryElapsed = tt.timeout, tt.timeout
				c := newClient(t, s.cfg)
				req, body := testRequest(t, 4)
				r, took := export(c, body, 4, tt.mode)
				if r.Attempts != tt.attempts || r.Cause != tt.cause || s.calls() != tt.attempts {
					t.Fatalf("result %+v after %d calls, want %d attempts and %v", r, s.calls(), tt.attempts, tt.cause)
				}
				if took < tt.minTook || took > tt.maxTook {
					t.Errorf("took %v, want %v to %v", took, tt.minTook, tt.maxTook)
				}
				if delivered := tt.cause == Delivered; delivered != (r.Err == nil) || delivered != (r.Rejected == 0) || !delivered && r.Rejected != 4 {
					t.Errorf("result %+v", r)
				}
				for i, got := range s.received() {
					if !proto.Equal(got, req) {
						t.Errorf("attempt %d sent another request", i+1)
					}
				}
			})
		})
	}
}

// An export after Close fails at once with ErrClosed, which reads as one
// plain sentence, and reaches no collector; a second Close is harmless.
func TestExportAfterClose(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		s := tc.serve(t, loopback(t), answers(reply{}))
		c, err := New(s.cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, body := testRequest(t, 2)
		if r, _ := export(c, body, 2, Normal); r.Err != nil {
			t.Fatalf("result %+v", r)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		r, _ := export(c, body, 2, Normal)
		if !errors.Is(r.Err, ErrClosed) || r.Rejected != 2 || r.Attempts != 0 || s.calls() != 1 {
			t.Errorf("export after Close: %+v, %d calls", r, s.calls())
		} else if r.Err.Error() != "the exporter is closed" {
			t.Errorf("export after Close: error %q", r.Err)
		}
		if err := c.Close(context.Background()); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// Close does not wait for an export in flight, which fails with ErrClosed:
// at once over gRPC, whose Close ends its calls; by its own timeout over
// HTTP, whose Close only drops idle connections.
func TestCloseDuringAnExport(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		s := tc.serve(t, loopback(t), answers(reply{kind: hang}))
		s.cfg.Timeout, s.cfg.RetryElapsed = time.Second, time.Second
		c, err := New(s.cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, body := testRequest(t, 2)
		done := make(chan Result, 1)
		go func() { done <- c.Export(context.Background(), body, 2, Normal) }()
		waitFor(t, "the call", func() bool { return s.calls() > 0 })
		start := time.Now()
		if err := c.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		within(t, "Close", time.Since(start), 500*time.Millisecond)
		bound := s.cfg.Timeout + 500*time.Millisecond
		if tc.closeEndsExports {
			bound = 500 * time.Millisecond
		}
		select {
		case r := <-done:
			within(t, "the export after Close", time.Since(start), bound)
			if !errors.Is(r.Err, ErrClosed) || r.Rejected != 2 {
				t.Errorf("export in flight: %+v", r)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("the export in flight did not end")
		}
	})
}

// Concurrent exports all arrive whole, and a body the caller writes over
// once Export returns never reaches the collector.
func TestConcurrentExports(t *testing.T) {
	eachCompression(t, func(t *testing.T, c Client, s served, _ bool) {
		want, _ := testRequest(t, 3)
		_, other := testRequest(t, 7)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, body := testRequest(t, 3)
				fresh := slices.Clone(body)
				for range 5 {
					if r := c.Export(context.Background(), body, 3, Normal); r.Err != nil {
						t.Errorf("result %+v", r)
					}
					copy(body, other)
					time.Sleep(time.Millisecond)
					copy(body, fresh)
				}
			})
		}
		wg.Wait()
		if n := s.calls(); n != 40 {
			t.Errorf("collector got %d calls, want 40", n)
		}
		for i, got := range s.received() {
			if !proto.Equal(got, want) {
				t.Fatalf("request %d is not the one sent: the transport read the caller's buffer after Export returned", i)
			}
		}
	})
}

// bigBody is the largest request the test collectors take; a larger one
// is refused before it is read, as collectors refuse what is over their
// limit. It is more than the kernel buffers of a loopback connection to a
// slow collector hold, so that a transport still sends it when its
// Export returns.
const bigBody = 8 << 20

// Once Export returns the body is the caller's again, though the collector
// has not read it all: the pipeline fills the buffer with the next batch
// then. Bytes the caller writes after the return must never reach the
// collector, whether the call was canceled or answered before the
// collector read it (under -race, a transport that reads them also fails
// as a race).
func TestBodyIsLeftOnReturn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		size   int
		cancel bool
		check  func(r Result) bool
	}{
		{"canceled", bigBody, true, func(r Result) bool { return errors.Is(r.Err, context.Canceled) && r.Cause == Other }},
		{"answered unread", bigBody + 1, false, func(r Result) bool { return r.Cause == Rejected && r.Attempts == 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eachTransport(t, func(t *testing.T, tc transportCase) {
				l := &slowListener{Listener: loopback(t), fast: make(chan struct{})}
				s := tc.serve(t, l, answers(reply{}))
				t.Cleanup(l.drop)
				c := newClient(t, s.cfg)
				body := bytes.Repeat([]byte{^marker}, tt.size)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.cancel {
					time.AfterFunc(150*time.Millisecond, cancel)
				}
				start := time.Now()
				r := c.Export(ctx, body, 1, Normal)
				for i := range body {
					body[i] = marker
				}
				within(t, "export", time.Since(start), time.Second)
				if !tt.check(r) {
					t.Errorf("result %+v", r)
				}
				// What the kernel holds goes at once, and a transport that
				// kept the body sends it now.
				close(l.fast)
				time.Sleep(200 * time.Millisecond)
				if l.sawMarker.Load() {
					t.Error("the collector received bytes written over the body after Export returned")
				}
			})
		})
	}
}

// marker is the byte TestBodyIsLeftOnReturn writes over a body once Export
// returns.
const marker byte = 0x5a

// slowListener hands out connections that buffer little and read a little
// at a time, as a collector on a slow link would, until fast is closed;
// sawMarker says whether one read a run of marker.
type slowListener struct {
	net.Listener
	fast      chan struct{}
	sawMarker atomic.Bool
	mu        sync.Mutex
	conns     []net.Conn
}

func (l *slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(16 << 10)
	}
	l.mu.Lock()
	l.conns = append(l.conns, c)
	l.mu.Unlock()
	return slowConn{c, l}, nil
}

// drop closes the connections: a collector still reading a request the
// client has given up on can wait many seconds (24 seen) for the kernel
// to say so, and closing the server waits for it.
func (l *slowListener) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
}

type slowConn struct {
	net.Conn
	l *slowListener
}

// markerRun is more of marker in a row than the framing of a request
// holds.
var markerRun = bytes.Repeat([]byte{marker}, 16)

func (c slowConn) Read(p []byte) (int, error) {
	select {
	case <-c.l.fast:
	case <-time.After(2 * time.Millisecond):
		p = p[:min(len(p), 4<<10)]
	}
	n, err := c.Conn.Read(p)
	if bytes.Contains(p[:n], markerRun) {
		c.l.sawMarker.Store(true)
	}
	return n, err
}

// OTLP/HTTP sent to a gRPC port, and gRPC to an HTTP one, the commonest
// OTLP misconfiguration, is told in words every time: which protocol the
// endpoint answered in, with none of net/http's or gRPC's internals (such
// as "readLoopPeekFailLocked: %!w(<nil>)" or the frame's bytes).
func TestProtocolMismatchToldPlainly(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		cfg     func(t *testing.T) Config
		exports int
		says    string
	}{
		{"http to the grpc port", func(t *testing.T) Config {
			return httpConfig("http://" + (&collector{}).start(t))
		}, 20, "it answered in HTTP/2 frames, as a gRPC server does"},
		{"grpc to the http port", func(t *testing.T) Config {
			return grpcConfig((&httpCollector{}).start(t).Listener.Addr().String())
		}, 2, "it answered in HTTP/1.1, as an OTLP/HTTP server does"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, tt.cfg(t))
			slowToSend(c)
			_, body := testRequest(t, 2)
			for range tt.exports {
				r := c.Export(context.Background(), body, 2, Normal)
				if r.Cause != ProtocolMismatch || r.Attempts != 1 || r.Err == nil ||
					!strings.HasSuffix(r.Err.Error(), ": the endpoint speaks another protocol: "+tt.says) {
					t.Fatalf("result %+v, want its error to end %q", r, tt.says)
				}
			}
		})
	}
}

// net/http writes nothing to the process's log when OTLP/HTTP is sent to
// a gRPC port. A gRPC server sends its settings as soon as a connection
// opens; net/http, when they come to a connection with no request on it,
// takes them for an answer nobody asked for and logs them. A connection
// has none when its export ended while it was being dialled (net/http
// keeps it for the next request), or, by a race, before its first request
// is sent. Not parallel: the test owns the standard logger's output.
func TestProtocolMismatchLogsNothing(t *testing.T) {
	var logged testsupport.LockedBuffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	c := newClient(t, httpConfig("http://"+(&collector{}).start(t)))
	slowToSend(c)
	_, body := testRequest(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), slowDial/4)
	defer cancel()
	if r := c.Export(ctx, body, 2, Normal); r.Err == nil {
		t.Fatalf("result %+v, want the export to end while dialling", r)
	}
	time.Sleep(2 * slowDial) // the dial ends; its connection waits, idle
	for range 10 {
		if r := c.Export(context.Background(), body, 2, Normal); r.Cause != ProtocolMismatch || r.Attempts != 1 {
			t.Errorf("result %+v", r)
		}
	}
	if s := logged.String(); s != "" {
		t.Errorf("written to the process's log: %q", s)
	}
}

// slowDial is how long slowToSend's connections take to reach net/http.
const slowDial = 40 * time.Millisecond

// slowToSend makes c, if it is an HTTP client not yet used, hand each new
// connection to net/http only once the server has had time to speak
// first, as a client short of CPU does.
func slowToSend(c Client) {
	hc, ok := c.(*httpClient)
	if !ok {
		return
	}
	tr := hc.client.Transport.(*http.Transport)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		time.Sleep(slowDial)
		return conn, err
	}
}

// dropFirst is a listener whose first connection is closed as soon as it
// is accepted, before a word: a collector restarting under its client.
type dropFirst struct {
	net.Listener
	dropped bool
}

func (l *dropFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.dropped {
			return c, err
		}
		l.dropped = true
		c.Close()
	}
}

// A connection closed before the server's first word reads, over
// plaintext gRPC, as a TLS server's would; the export tries once more at
// once, and a collector that was restarting takes the batch. Over HTTP the
// closed connection was always retried (a broken connection is
// retryable): that half guards it, and only the gRPC half failed before
// the retry at once.
func TestConnectionClosedAtOnceIsTriedAgain(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		s := tc.serve(t, &dropFirst{Listener: loopback(t)}, answers(reply{}))
		c := newClient(t, s.cfg)
		_, body := testRequest(t, 3)
		if r, _ := export(c, body, 3, Final); r.Err != nil || r.Cause != Delivered {
			t.Fatalf("result %+v: the batch of a restarting collector was lost", r)
		}
	})
}
