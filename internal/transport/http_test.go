package transport

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testcert"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// httpCollector is a test OTLP/HTTP endpoint: it checks the request,
// records it, and answers as handle says.
type httpCollector struct {
	t     testing.TB
	calls atomic.Int32
	requestLog
	hdrs   []http.Header
	raw    [][]byte // bodies as they came, before gunzip
	handle func(w http.ResponseWriter, r *http.Request, call int)
}

func (c *httpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := int(c.calls.Add(1))
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	data := raw
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err == nil {
			data, err = io.ReadAll(zr)
		}
		if err != nil {
			http.Error(w, "gzip: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		http.Error(w, "proto: "+err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, &req)
	c.hdrs = append(c.hdrs, r.Header.Clone())
	c.raw = append(c.raw, raw)
	c.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request line or content type", http.StatusBadRequest)
		return
	}
	if got := r.Header.Get("Authorization"); got != authValue {
		http.Error(w, "bad token "+got, http.StatusUnauthorized)
		return
	}
	if c.handle != nil {
		c.handle(w, r, call)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// start serves c on loopback, plaintext, until the test ends.
func (c *httpCollector) start(t testing.TB) *httptest.Server {
	t.Helper()
	c.t = t
	s := httptest.NewServer(c)
	t.Cleanup(s.Close)
	return s
}

// startTLS serves c on loopback with the testcert certificate.
func (c *httpCollector) startTLS(t testing.TB) (*httptest.Server, testcert.Files) {
	t.Helper()
	files, err := testcert.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(c)
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are what some tests make
	s.TLS = &tls.Config{Certificates: []tls.Certificate{files.Pair}, MinVersion: tls.VersionTLS12}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s, files
}

func httpConfig(base string) Config {
	return Config{
		Protocol:  HTTPProtobuf,
		Endpoint:  base + "/v1/logs",
		Headers:   map[string]string{"Authorization": authValue},
		UserAgent: "zaplens-test/1.0",
		Timeout:   5 * time.Second,
	}
}

// answer writes a protobuf message with a status code.
func answer(w http.ResponseWriter, code int, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func TestHTTPDeliversBytesIntact(t *testing.T) {
	t.Parallel()
	col := &httpCollector{}
	c := newClient(t, httpConfig(col.start(t).URL))
	req, body := testRequest(t, 20)
	r, _ := export(c, body, 20, Normal)
	if r.Err != nil || r.Cause != Delivered || r.Rejected != 0 || r.Attempts != 1 {
		t.Fatalf("result %+v", r)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if !proto.Equal(col.reqs[0], req) || !bytes.Equal(col.raw[0], body) {
		t.Error("request changed on the way")
	}
	h := col.hdrs[0]
	if h.Get("User-Agent") != "zaplens-test/1.0" || h.Get("Content-Encoding") != "" {
		t.Errorf("headers %v", h)
	}
}

func TestHTTPGzip(t *testing.T) {
	t.Parallel()
	col := &httpCollector{}
	cfg := httpConfig(col.start(t).URL)
	cfg.Gzip = true
	c := newClient(t, cfg)
	req, body := testRequest(t, 50)
	if r, _ := export(c, body, 50, Normal); r.Err != nil || r.Cause != Delivered {
		t.Fatalf("result %+v", r)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if col.hdrs[0].Get("Content-Encoding") != "gzip" || len(col.raw[0]) >= len(body) {
		t.Errorf("Content-Encoding %q, %d bytes for %d", col.hdrs[0].Get("Content-Encoding"), len(col.raw[0]), len(body))
	}
	if !proto.Equal(col.reqs[0], req) {
		t.Error("request changed on the way")
	}
}

func TestHTTPPartialSuccess(t *testing.T) {
	t.Parallel()
	col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
		answer(w, http.StatusOK, &collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{
			RejectedLogRecords: 4, ErrorMessage: "too old\x1b[0m " + authValue,
		}})
	}}
	c := newClient(t, httpConfig(col.start(t).URL))
	_, body := testRequest(t, 10)
	r, _ := export(c, body, 10, Normal)
	if r.Rejected != 4 || r.Cause != PartialSuccess || r.Attempts != 1 || r.Err == nil {
		t.Fatalf("result %+v", r)
	}
	checkClean(t, r.Err)
	if !strings.Contains(r.Err.Error(), `rejected 4 of 10 log records: too old\x1b[0m `+Redacted) {
		t.Errorf("error %q", r.Err)
	}
}

func TestHTTPRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		first   func(w http.ResponseWriter)
		minWait time.Duration
	}{
		{"429 Retry-After 1", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}, 950 * time.Millisecond},
		{"503", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, 300 * time.Millisecond},
		{"502", func(w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) }, 300 * time.Millisecond},
		{"504", func(w http.ResponseWriter) { w.WriteHeader(http.StatusGatewayTimeout) }, 300 * time.Millisecond},
		{"503 Retry-After date", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", time.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		}, 900 * time.Millisecond}, // the date has one-second resolution
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, call int) {
				if call == 1 {
					tt.first(w)
					return
				}
				w.WriteHeader(http.StatusOK)
			}}
			c := newClient(t, httpConfig(col.start(t).URL))
			req, body := testRequest(t, 3)
			r, took := export(c, body, 3, Normal)
			if r.Err != nil || r.Cause != Delivered || r.Attempts != 2 {
				t.Fatalf("result %+v", r)
			}
			if took < tt.minWait {
				t.Errorf("took %v, want at least %v", took, tt.minWait)
			}
			col.mu.Lock()
			defer col.mu.Unlock()
			if len(col.reqs) != 2 || !proto.Equal(col.reqs[1], req) {
				t.Error("the retry did not resend the request")
			}
		})
	}
}

func TestHTTPRetriesRunOut(t *testing.T) {
	t.Parallel()
	col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}}
	cfg := httpConfig(col.start(t).URL)
	cfg.Timeout = 1500 * time.Millisecond
	c := newClient(t, cfg)
	_, body := testRequest(t, 3)
	r, took := export(c, body, 3, Final) // a live collector's retryable answers are retried in Final mode too
	// Bounded by the timeout; the slack is for a busy machine: beside a
	// fuzzer on both cores one run went past 2.5 s.
	within(t, "export", took, 4*time.Second)
	if r.Attempts < 2 || r.Cause != Unavailable || r.Rejected != 3 || !strings.Contains(r.Err.Error(), "503") {
		t.Errorf("result %+v", r)
	}
}

func TestHTTPNotRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code  int
		body  func(w http.ResponseWriter)
		cause Cause
		err   string
	}{
		{http.StatusBadRequest, func(w http.ResponseWriter) {
			answer(w, http.StatusBadRequest, &spb.Status{Code: 3, Message: "field 7\nis bad " + authValue})
		}, Rejected, `HTTP 400 Bad Request: field 7\nis bad ` + Redacted},
		{http.StatusRequestEntityTooLarge, func(w http.ResponseWriter) { w.WriteHeader(http.StatusRequestEntityTooLarge) }, Rejected, "413"},
		{http.StatusInternalServerError, func(w http.ResponseWriter) {
			http.Error(w, "boom\x1b]0;title\x07", http.StatusInternalServerError)
		}, Rejected, `500 Internal Server Error: boom\x1b]0;title\a`},
		{http.StatusNotFound, func(w http.ResponseWriter) { http.NotFound(w, nil) }, Rejected, "/v1/logs"},
		{http.StatusUnauthorized, func(w http.ResponseWriter) { w.WriteHeader(http.StatusUnauthorized) }, Unauthenticated, "401"},
		{http.StatusForbidden, func(w http.ResponseWriter) { w.WriteHeader(http.StatusForbidden) }, Unauthenticated, "403"},
		{http.StatusTemporaryRedirect, func(w http.ResponseWriter) {
			w.Header().Set("Location", "http://elsewhere.invalid/v1/logs")
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, Rejected, `redirecting to "http://elsewhere.invalid/v1/logs"`},
	}
	for _, tt := range tests {
		col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) { tt.body(w) }}
		c := newClient(t, httpConfig(col.start(t).URL))
		_, body := testRequest(t, 6)
		r, _ := export(c, body, 6, Normal)
		if r.Attempts != 1 || r.Cause != tt.cause || r.Rejected != 6 || col.calls.Load() != 1 {
			t.Errorf("%d: result %+v, calls %d", tt.code, r, col.calls.Load())
			continue
		}
		checkClean(t, r.Err)
		if !strings.Contains(r.Err.Error(), tt.err) {
			t.Errorf("%d: error %q lacks %q", tt.code, r.Err, tt.err)
		}
	}
}

func TestHTTPLargeErrorBodyIsBounded(t *testing.T) {
	t.Parallel()
	col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(bytes.Repeat([]byte("bad\n"), 1<<20))
	}}
	c := newClient(t, httpConfig(col.start(t).URL))
	_, body := testRequest(t, 1)
	r, _ := export(c, body, 1, Normal)
	if r.Cause != Rejected || len(r.Err.Error()) > 200+MaxSanitized || !strings.HasSuffix(r.Err.Error(), CutMarker) {
		t.Errorf("result %+v", r)
	}
	checkClean(t, r.Err)
}

func TestHTTPSuccessWithGarbageBody(t *testing.T) {
	t.Parallel()
	col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>\xff\xfe not a collector</html>"))
	}}
	c := newClient(t, httpConfig(col.start(t).URL))
	_, body := testRequest(t, 2)
	r, _ := export(c, body, 2, Normal)
	if r.Cause != Other || r.Err == nil || r.Rejected != 2 || r.Attempts != 1 {
		t.Errorf("result %+v", r)
	}
}

func TestHTTPTLSMismatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// endpoint serves col and names it with the wrong scheme.
		endpoint func(t *testing.T, col *httpCollector) string
		hint     string // what the hint says to use instead
	}{
		{"https to a plaintext server", func(t *testing.T, col *httpCollector) string {
			return strings.Replace(col.start(t).URL, "http://", "https://", 1)
		}, "http://host:port"},
		{"http to a TLS server", func(t *testing.T, col *httpCollector) string {
			srv, _ := col.startTLS(t)
			return strings.Replace(srv.URL, "https://", "http://", 1)
		}, "https://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ep := tc.endpoint(t, &httpCollector{})
			c := newClient(t, httpConfig(ep))
			_, body := testRequest(t, 2)
			r, took := export(c, body, 2, Normal)
			within(t, "export", took, 2*time.Second)
			if r.Cause != TLSMismatch || r.Attempts != 1 {
				t.Fatalf("result %+v", r)
			}
			if h := r.Cause.Hint(ep); !strings.Contains(h, tc.hint) {
				t.Errorf("hint %q", h)
			}
		})
	}
}

func TestHTTPClose(t *testing.T) {
	t.Parallel()
	col := &httpCollector{}
	c, err := New(httpConfig(col.start(t).URL))
	if err != nil {
		t.Fatal(err)
	}
	_, body := testRequest(t, 2)
	if r, _ := export(c, body, 2, Normal); r.Err != nil {
		t.Fatal(r)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, _ := export(c, body, 2, Normal); !errors.Is(r.Err, ErrClosed) || r.Rejected != 2 || r.Attempts != 0 {
		t.Errorf("export after Close: %+v", r)
	}
}

func TestHTTPBodyIsDetachedOnReturn(t *testing.T) {
	o := &bodyOwner{data: []byte("abcdef")}
	r := o.reader()
	p := make([]byte, 4)
	if n, err := r.Read(p); n != 4 || err != nil || string(p) != "abcd" {
		t.Fatalf("read %d %v %q", n, err, p)
	}
	again := o.reader()
	if b, err := io.ReadAll(again); err != nil || string(b) != "abcdef" {
		t.Fatalf("second reader: %q %v", b, err)
	}
	o.detach()
	if n, err := r.Read(p); n != 0 || !errors.Is(err, errBodyDetached) {
		t.Errorf("read after detach: %d %v", n, err)
	}
}

func TestHTTPConcurrentExports(t *testing.T) {
	t.Parallel()
	col := &httpCollector{}
	cfg := httpConfig(col.start(t).URL)
	cfg.Gzip = true
	c := newClient(t, cfg)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, body := testRequest(t, 3)
			for range 5 {
				if r := c.Export(context.Background(), body, 3, Normal); r.Err != nil {
					t.Errorf("result %+v", r)
				}
			}
		})
	}
	wg.Wait()
	if n := col.calls.Load(); n != 40 {
		t.Errorf("collector got %d calls, want 40", n)
	}
}
