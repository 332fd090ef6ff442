package transport

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// What both transports must do alike, asked of each.

// transportCase is one transport, as these tests reach it.
type transportCase struct {
	name string
	// refused is a configuration for an endpoint nobody listens on, and
	// that endpoint as the hints name it.
	refused func(t *testing.T) (Config, string)
	// slow is a configuration for a collector that never answers.
	slow func(t *testing.T) Config
}

var transportCases = []transportCase{
	{
		name: "grpc",
		refused: func(t *testing.T) (Config, string) {
			addr := closedAddr(t)
			return grpcConfig(addr), addr
		},
		slow: func(t *testing.T) Config { return grpcConfig(slowCollector().start(t)) },
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
	},
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
