package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/proto"
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

// transportCase is one transport, as these tests reach it.
type transportCase struct {
	name string
	// refused is a configuration for an endpoint nobody listens on, and
	// that endpoint as the hints name it.
	refused func(t *testing.T) (Config, string)
	// slow is a configuration for a collector that never answers.
	slow func(t *testing.T) Config
	// tls is a configuration for a collector serving TLS with a test CA's
	// certificate, which cfg.TLS trusts, and the requests it has received.
	tls func(t *testing.T) (Config, func() []*collogspb.ExportLogsServiceRequest)
}

var transportCases = []transportCase{
	{
		name: "grpc",
		refused: func(t *testing.T) (Config, string) {
			addr := closedAddr(t)
			return grpcConfig(addr), addr
		},
		slow: func(t *testing.T) Config { return grpcConfig(slowCollector().start(t)) },
		tls: func(t *testing.T) (Config, func() []*collogspb.ExportLogsServiceRequest) {
			creds, files := tlsServerCreds(t)
			col := &collector{}
			cfg := grpcConfig(col.start(t, creds))
			cfg.Insecure = false
			cfg.TLS = &tls.Config{RootCAs: files.Pool}
			return cfg, col.received
		},
	},
	{
		name: "http",
		refused: func(t *testing.T) (Config, string) {
			addr := closedAddr(t)
			return httpConfig("http://" + addr), addr
		},
		slow: func(t *testing.T) Config {
			col := &httpCollector{handle: func(w http.ResponseWriter, r *http.Request, _ int) {
				select {
				case <-r.Context().Done():
				case <-time.After(10 * time.Second):
				}
			}}
			return httpConfig(col.start(t).URL)
		},
		tls: func(t *testing.T) (Config, func() []*collogspb.ExportLogsServiceRequest) {
			col := &httpCollector{}
			srv, files := col.startTLS(t)
			cfg := httpConfig(srv.URL)
			cfg.TLS = &tls.Config{RootCAs: files.Pool}
			cfg.Insecure = true // ignored for HTTP: the scheme says TLS
			return cfg, col.received
		},
	},
}

// TLS with a CA of the caller's delivers the request intact and leaves the
// caller's tls.Config as it was; the system roots, which do not trust the
// test CA, make a failure that is neither a mismatch nor retried.
func TestTLS(t *testing.T) {
	t.Parallel()
	for _, tc := range transportCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
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
}

func TestFinalRefusedFailsAtOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range transportCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, addr := tc.refused(t)
			c := newClient(t, cfg)
			_, body := testRequest(t, 9)
			r, took := export(c, body, 9, Final)
			within(t, "export", took, time.Second)
			if r.Cause != Refused || r.Attempts != 1 || r.Rejected != 9 || r.Err == nil {
				t.Fatalf("result %+v", r)
			}
			if !strings.Contains(r.Err.Error(), "connection refused") {
				t.Errorf("error %q", r.Err)
			}
			if h := r.Cause.Hint(addr); !strings.Contains(h, addr) {
				t.Errorf("hint %q does not name %s", h, addr)
			}
		})
	}
}

func TestNormalRefusedRetriesUntilTheTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range transportCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, _ := tc.refused(t)
			cfg.Timeout = 2 * time.Second
			c := newClient(t, cfg)
			_, body := testRequest(t, 4)
			r, took := export(c, body, 4, Normal)
			within(t, "export", took, 3500*time.Millisecond)
			if r.Cause != Refused || r.Rejected != 4 || r.Attempts < 2 || took < time.Second {
				t.Fatalf("result %+v after %v: want retries until the next one would pass the 2 s timeout", r, took)
			}
		})
	}
}

func TestSlowCollectorTimesOut(t *testing.T) {
	t.Parallel()
	for _, tc := range transportCases {
		for _, mode := range []Mode{Normal, Final} {
			t.Run(tc.name+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				cfg := tc.slow(t)
				cfg.Timeout = 800 * time.Millisecond
				c := newClient(t, cfg)
				_, body := testRequest(t, 5)
				r, took := export(c, body, 5, mode)
				within(t, "export", took, 2*time.Second)
				if took < 700*time.Millisecond {
					t.Errorf("gave up after %v, before the timeout", took)
				}
				if r.Cause != Timeout || r.Rejected != 5 || !errors.Is(r.Err, context.DeadlineExceeded) {
					t.Errorf("result %+v", r)
				}
			})
		}
	}
}
