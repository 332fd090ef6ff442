package transport

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testsupport/testcert"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// httpCollector is a test OTLP/HTTP endpoint: it checks the request,
// records it, and answers as handle says.
type httpCollector struct {
	calls atomic.Int32
	requestLog
	hdrs   []http.Header
	raw    [][]byte // bodies as they came, before gunzip
	handle func(w http.ResponseWriter, r *http.Request, call int)
	// maxBody, when set, has a larger request refused before it is read.
	maxBody int64
}

func (c *httpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	call := int(c.calls.Add(1))
	if c.maxBody > 0 && r.ContentLength > c.maxBody {
		refuseUnread(w, r)
		return
	}
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

// refuseUnread answers 413 at once, then reads the request, as a proxy in
// front of a collector may: the client has its answer while it still
// sends the body.
func refuseUnread(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.EnableFullDuplex()
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_ = rc.Flush()
	_, _ = io.Copy(io.Discard, r.Body)
}

// start serves c on loopback, plaintext, until the test ends.
func (c *httpCollector) start(t testing.TB) *httptest.Server {
	t.Helper()
	return c.serve(t, loopback(t))
}

// serve serves c on l, plaintext, until the test ends.
func (c *httpCollector) serve(t testing.TB, l net.Listener) *httptest.Server {
	t.Helper()
	s := &httptest.Server{Listener: l, Config: &http.Server{Handler: c}}
	s.Start()
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
		Endpoint:  endpointOf(base+"/v1/logs", HTTPProtobuf),
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

// The answers the OTLP spec retries are retried, after the delay a
// Retry-After asks for, and no other is; TestRetries sees retries made.
func TestHTTPStatusClassified(t *testing.T) {
	c := &httpClient{endpoint: "http://collector:4318/v1/logs"}
	inTwo := time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat)
	for _, tt := range []struct {
		code                     int
		retryAfter               string
		cause                    Cause
		retryable                bool
		minThrottle, maxThrottle time.Duration
	}{
		{http.StatusTooManyRequests, "", Unavailable, true, 0, 0},
		{http.StatusTooManyRequests, "1", Unavailable, true, time.Second, time.Second},
		{http.StatusBadGateway, "", Unavailable, true, 0, 0},
		{http.StatusServiceUnavailable, "", Unavailable, true, 0, 0},
		{http.StatusServiceUnavailable, inTwo, Unavailable, true, time.Second, 2 * time.Second}, // the date has one-second resolution
		{http.StatusGatewayTimeout, "", Unavailable, true, 0, 0},
		{http.StatusInternalServerError, "1", Rejected, false, 0, 0}, // a delay does not make it retryable
		{http.StatusUnauthorized, "", Unauthenticated, false, 0, 0},
	} {
		resp := &http.Response{StatusCode: tt.code, Header: http.Header{}, Body: http.NoBody}
		if tt.retryAfter != "" {
			resp.Header.Set("Retry-After", tt.retryAfter)
		}
		a := c.failure(resp)
		if a.cause != tt.cause || a.retryable != tt.retryable || a.throttle < tt.minThrottle || a.throttle > tt.maxThrottle || a.err == nil {
			t.Errorf("%d %q: %v, retryable %v, throttle %v, err %v", tt.code, tt.retryAfter, a.cause, a.retryable, a.throttle, a.err)
		}
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

// An answer of the largest size read is read, one byte more is not: a
// partial success at the bound counts its rejected records, and one past
// it fails the export, once, rather than guess.
func TestHTTPAnswerAtItsBound(t *testing.T) {
	t.Parallel()
	for _, extra := range []int{0, 1} {
		resp := &collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: 1}}
		resp.PartialSuccess.ErrorMessage = strings.Repeat("x", maxResponseBody-16)
		resp.PartialSuccess.ErrorMessage += strings.Repeat("x", maxResponseBody+extra-proto.Size(resp))
		if proto.Size(resp) != maxResponseBody+extra {
			t.Fatalf("an answer of %d bytes, want %d", proto.Size(resp), maxResponseBody+extra)
		}
		col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) { answer(w, http.StatusOK, resp) }}
		c := newClient(t, httpConfig(col.start(t).URL))
		_, body := testRequest(t, 2)
		r, _ := export(c, body, 2, Normal)
		if extra == 0 && (r.Cause != PartialSuccess || r.Rejected != 1) ||
			extra == 1 && (r.Cause != Other || r.Rejected != 2 || !strings.Contains(r.Err.Error(), "over")) || r.Attempts != 1 {
			t.Errorf("an answer %d byte past the bound: result %+v", extra, r)
		}
	}
}

// A 3xx is no delivery: the redirect is not followed (a POST body is not
// sent again), and the records are not counted as taken.
func TestHTTPRedirectIsNoDelivery(t *testing.T) {
	t.Parallel()
	col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.WriteHeader(http.StatusMultipleChoices)
	}}
	c := newClient(t, httpConfig(col.start(t).URL))
	_, body := testRequest(t, 2)
	if r, _ := export(c, body, 2, Normal); r.Cause == Delivered || r.Err == nil || r.Rejected != 2 {
		t.Errorf("result %+v", r)
	}
}

// A body that says it is protobuf and is not cannot be read as a partial
// success: the export fails, once, rather than guess.
func TestHTTPSuccessWithGarbageBody(t *testing.T) {
	t.Parallel()
	col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write([]byte("<html>\xff\xfe not a collector</html>"))
	}}
	c := newClient(t, httpConfig(col.start(t).URL))
	_, body := testRequest(t, 2)
	r, _ := export(c, body, 2, Normal)
	if r.Cause != Other || r.Err == nil || r.Rejected != 2 || r.Attempts != 1 {
		t.Errorf("result %+v", r)
	}
}

// A 2xx whose body is not protobuf is a delivery, as otlploghttp reads it:
// proxies answer `200 {}` or `200 OK`, and VictoriaLogs 200 with an empty
// body and no content type. Counting those failed would count delivered
// records as lost, and a caller that resends them would send them twice.
func TestHTTPSuccessWithOtherBody(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, contentType, body string
		code                    int
	}{
		{"json", "application/json", "{}", http.StatusOK},
		{"text", "text/plain; charset=utf-8", "OK", http.StatusOK},
		{"empty, no type", "", "", http.StatusOK},
		{"html", "text/html", "<html>\xff\xfe accepted</html>", http.StatusAccepted},
		{"no content", "", "", http.StatusNoContent},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			col := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
				w.Header()["Content-Type"] = nil // no sniffed type either
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				}
				w.WriteHeader(tt.code)
				_, _ = io.WriteString(w, tt.body)
			}}
			c := newClient(t, httpConfig(col.start(t).URL))
			_, body := testRequest(t, 3)
			r, _ := export(c, body, 3, Normal)
			if r.Cause != Delivered || r.Err != nil || r.Rejected != 0 || r.Attempts != 1 || r.Status != strconv.Itoa(tt.code) {
				t.Errorf("result %+v", r)
			}
		})
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

// A write that fails under a server's reset still finds what the server
// had sent, unread: a gRPC server's settings tell the mismatch; anything
// else does not, and is left whole for net/http's reader.
func TestClientFirstFailedWriteSeesWhatCame(t *testing.T) {
	settings := []byte{0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100} // a SETTINGS frame, one setting
	tooLarge := []byte("HTTP/1.1 413 Request Entity Too Large\r\nContent-Length: 0\r\n\r\n")
	for _, tt := range []struct {
		name   string
		sent   []byte
		http2  bool
		intact bool
	}{{"grpc settings", settings, true, false}, {"an http answer", tooLarge, false, true}} {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				s, err := ln.Accept()
				if err != nil {
					return
				}
				s.Write(tt.sent)
				s.Read(make([]byte, 1)) // the request begins
				s.(*net.TCPConn).SetLinger(0)
				s.Close() // a reset: unread bytes were left
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			c := newClientFirst(raw)
			defer c.Close()
			chunk := make([]byte, 64<<10)
			deadline := time.Now().Add(5 * time.Second)
			for err == nil && time.Now().Before(deadline) {
				_, err = c.Write(chunk)
				time.Sleep(time.Millisecond)
			}
			if err == nil {
				t.Fatal("no write failed")
			}
			if got := c.answeredHTTP2.Load(); got != tt.http2 {
				t.Errorf("answered in HTTP/2: %v, want %v (write error %v)", got, tt.http2, err)
			}
			if tt.intact {
				got := make([]byte, len(tt.sent))
				if n, _ := io.ReadFull(raw, got); !bytes.Equal(got[:n], tt.sent) {
					t.Errorf("read after the sniff %q, want %q whole", got[:n], tt.sent)
				}
			}
		})
	}
}
