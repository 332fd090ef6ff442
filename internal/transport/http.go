package transport

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

const (
	// maxErrorBody is the most of an error answer's body that is read.
	maxErrorBody = 64 << 10
	// maxResponseBody is the most of a success answer's body that is read.
	maxResponseBody = 1 << 20
)

// httpClient POSTs requests with net/http.
type httpClient struct {
	client    *http.Client
	spread    *spread  // nil when the endpoint is an address, or proxied
	url       *url.URL // shared by every request, read only
	endpoint  string   // sanitized, for errors
	header    http.Header
	gzip      bool
	plaintext bool
	bounds    bounds
	onRetry   func(Cause, error)
	secrets   []string
	closed    atomic.Bool
}

func newHTTP(cfg Config, secrets []string) *httpClient {
	e := cfg.Endpoint
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = clientFirstDial(tr.DialContext)
	if e.TLS {
		tr.TLSClientConfig = tlsConfig(cfg.TLS)
	}
	var rt http.RoundTripper = tr
	sp := newSpread(tr, e, cfg)
	if sp != nil {
		rt = sp
	}
	u := e.url()
	c := &httpClient{
		spread: sp,
		client: &http.Client{
			Transport: rt,
			// A redirect would send the records, and the headers, somewhere
			// the user did not configure: report it instead.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		url:       u,
		endpoint:  Sanitize(u.Redacted(), secrets),
		header:    make(http.Header, len(cfg.Headers)+3),
		gzip:      cfg.Gzip,
		plaintext: !e.TLS,
		bounds:    bounds{attempt: cfg.Timeout, elapsed: cfg.RetryElapsed},
		onRetry:   cfg.OnRetry,
		secrets:   secrets,
	}
	for k, v := range cfg.Headers {
		c.header.Set(k, v)
	}
	c.header.Set("Content-Type", "application/x-protobuf")
	if cfg.Gzip {
		c.header.Set("Content-Encoding", "gzip")
	} else {
		c.header.Del("Content-Encoding")
	}
	if cfg.UserAgent != "" {
		c.header.Set("User-Agent", cfg.UserAgent)
	}
	return c
}

// Export implements Client.
func (c *httpClient) Export(ctx context.Context, body []byte, n int, mode Mode) Result {
	if c.closed.Load() {
		return closedResult(n, 0)
	}
	payload := body
	if c.gzip {
		var err error
		if payload, err = compress(body); err != nil {
			return Result{Rejected: int64(max(n, 0)), Err: errorf(nil, "http export to %s: gzip: %v", c.endpoint, err), Cause: Other}
		}
	}
	// net/http may read a request body after Do returns: detaching it on
	// return keeps the caller's buffer out of its reach.
	owner := &bodyOwner{data: payload}
	defer owner.detach()
	return run(ctx, c.bounds, n, mode, &c.closed, c.onRetry, func(ctx context.Context) attempt {
		return c.send(ctx, owner, n)
	})
}

// send makes one request.
func (c *httpClient) send(ctx context.Context, owner *bodyOwner, n int) attempt {
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           c.url,
		Header:        c.header, // shared: net/http copies a request's headers before it changes them
		ContentLength: int64(len(owner.data)),
	}).WithContext(ctx)
	if len(owner.data) > 0 {
		req.Body = owner.reader()
		req.GetBody = func() (io.ReadCloser, error) { return owner.reader(), nil }
	} else {
		req.Body = http.NoBody
	}
	var conn *clientFirst // plaintext only: TLS wraps it
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { conn, _ = i.Conn.(*clientFirst) },
	}))
	resp, err := c.client.Do(req)
	if err != nil {
		// net/http, reading a gRPC server's settings as an answer, closes
		// the connection, and the request's write, if it is not done,
		// then fails on it: the error of that write is the one returned.
		if conn != nil && conn.answeredHTTP2.Load() {
			return answeredHTTP2.attempt("http", c.endpoint, "")
		}
		return c.classifyErr(err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		_ = resp.Body.Close()
	}()
	var a attempt
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		a = c.success(resp, n)
	} else {
		a = c.failure(resp)
	}
	a.status = strconv.Itoa(resp.StatusCode)
	return a
}

// success reads a 2xx answer. Only a protobuf body is an
// ExportLogsServiceResponse, maybe a partial success: any other, such as a
// proxy's `{}` or `OK`, or an empty body with no type, says no more than
// the status, that the records were taken. otlploghttp reads answers so.
func (c *httpClient) success(resp *http.Response, n int) attempt {
	if !isProtobuf(resp.Header.Get("Content-Type")) {
		return attempt{cause: Delivered}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody+1))
	if err != nil {
		// The status says the collector took the records: a retry would
		// send them twice. Only the partial-success details are lost.
		return attempt{cause: Delivered}
	}
	if len(data) > maxResponseBody {
		return attempt{cause: Other, err: errorf(nil, "http export to %s: HTTP %d with an answer over %d bytes", c.endpoint, resp.StatusCode, maxResponseBody)}
	}
	var r collogspb.ExportLogsServiceResponse
	if err := proto.Unmarshal(data, &r); err != nil {
		return attempt{cause: Other, err: errorf(nil, "http export to %s: HTTP %d, but the body is not an OTLP ExportLogsServiceResponse (is the endpoint a collector's /v1/logs?)", c.endpoint, resp.StatusCode)}
	}
	ps := r.GetPartialSuccess()
	return partial(ps.GetRejectedLogRecords(), ps.GetErrorMessage(), n, c.secrets)
}

// isProtobuf says whether a Content-Type is OTLP/HTTP's protobuf one; its
// parameters, if any, do not matter.
func isProtobuf(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/x-protobuf"
}

// failure reads a non-2xx answer.
func (c *httpClient) failure(resp *http.Response) attempt {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg := c.bodyMessage(resp, data)
	a := attempt{cause: Rejected, err: errorf(nil, "http export to %s: HTTP %s%s", c.endpoint, statusText(resp.StatusCode), msg)}
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		a.cause = Unauthenticated
	case code == http.StatusTooManyRequests || code == http.StatusBadGateway ||
		code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		a.cause, a.retryable = Unavailable, true
		a.throttle, _ = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	case code == http.StatusBadRequest && c.plaintext:
		if f, ok := classifyConn(nil, string(data), true); ok && f.cause == TLSMismatch {
			a.cause = TLSMismatch
			a.err = errorf(nil, "http export to %s: %s: HTTP %s%s", c.endpoint, f.what, statusText(code), msg)
		}
	case code >= 300 && code < 400:
		if loc := resp.Header.Get("Location"); loc != "" {
			a.err = errorf(nil, "http export to %s: HTTP %s, redirecting to %q (redirects are not followed: configure that endpoint)", c.endpoint, statusText(code), Sanitize(loc, c.secrets))
		}
	case code == http.StatusNotFound:
		a.err = errorf(nil, "http export to %s: HTTP %s (is the path /v1/logs?)%s", c.endpoint, statusText(code), msg)
	}
	return a
}

// bodyMessage is ": " and the message of an error answer, sanitized: the
// google.rpc.Status message when the body is one, else the body when it
// is text; "" when there is neither.
func (c *httpClient) bodyMessage(resp *http.Response, data []byte) string {
	if len(data) == 0 {
		return ""
	}
	ct := strings.ToLower(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "text/") && !strings.Contains(ct, "json") && !strings.Contains(ct, "html") {
		var st spb.Status
		if err := proto.Unmarshal(data, &st); err == nil && st.GetMessage() != "" {
			return ": " + Sanitize(st.GetMessage(), c.secrets)
		}
	}
	if utf8.Valid(data) {
		if s := strings.TrimSpace(string(data)); s != "" {
			return ": " + Sanitize(s, c.secrets)
		}
	}
	return ""
}

// classifyErr reads an error of Do: no answer came.
func (c *httpClient) classifyErr(err error) attempt {
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err // its text without the method and URL
	}
	detail := Sanitize(inner.Error(), c.secrets)
	if f, ok := classifyConn(err, err.Error(), c.plaintext); ok {
		return f.attempt("http", c.endpoint, detail)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		// The attempt's own bound: a later one may be answered, as a
		// gRPC DeadlineExceeded is retried.
		return attempt{cause: Timeout, retryable: true, err: errorf(context.DeadlineExceeded, "http export to %s: no answer in time: %s", c.endpoint, detail)}
	case errors.Is(err, context.Canceled):
		return attempt{cause: Other, err: errorf(context.Canceled, "http export to %s: canceled: %s", c.endpoint, detail)}
	}
	return attempt{cause: Unavailable, retryable: true, err: errorf(nil, "http export to %s: %s", c.endpoint, detail)}
}

// statusText is "503 Service Unavailable".
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprint(code)
}

// Close implements Client. In-flight exports end by their own deadlines.
func (c *httpClient) Close(context.Context) error {
	c.closed.Store(true)
	c.client.CloseIdleConnections()
	if c.spread != nil {
		c.spread.close()
	}
	return nil
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}

// compress gzips body into a new buffer.
func compress(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(body)/2 + 64)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer func() {
		zw.Reset(io.Discard) // keep no payload alive in the pool
		gzipWriters.Put(zw)
	}()
	zw.Reset(&buf)
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// clientFirst is a connection that reads nothing until something is
// written on it. HTTP is a protocol where the client speaks first, so it
// holds back nothing an answer needs; what it holds back is what a gRPC
// server sends as soon as a connection opens, its HTTP/2 settings. Read
// then, with no request yet on the connection (net/http keeps a connection
// whose export ended while it was dialled, and races its first request
// with its reader), net/http would take them for an answer nobody asked
// for and say so on the process's log, whoever owns it. Held, they are
// read as the answer to the request, which tells the protocol mismatch.
type clientFirst struct {
	net.Conn
	once    sync.Once
	written chan struct{} // closed by the first Write, or by Close
	sniff   sync.Once
	// answeredHTTP2 says whether the server's first bytes were an HTTP/2
	// SETTINGS frame, as a gRPC server's are.
	answeredHTTP2 atomic.Bool
}

// clientFirstDial wraps each connection dial makes in a clientFirst.
func clientFirstDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return newClientFirst(conn), nil
	}
}

func newClientFirst(c net.Conn) *clientFirst {
	return &clientFirst{Conn: c, written: make(chan struct{})}
}

func (c *clientFirst) open() { c.once.Do(func() { close(c.written) }) }

func (c *clientFirst) Read(p []byte) (int, error) {
	<-c.written
	n, err := c.Conn.Read(p)
	c.sniffFirst(p[:n])
	return n, err
}

// isSettingsFrame says whether b begins with the header of an HTTP/2
// SETTINGS frame on stream 0: a length under 64 KiB, type 4, any flags.
func isSettingsFrame(b []byte) bool {
	return len(b) >= 9 && b[0] == 0 && b[3] == 4 && b[5]&0x7f == 0 && b[6] == 0 && b[7] == 0 && b[8] == 0
}

func (c *clientFirst) Write(p []byte) (int, error) {
	c.open()
	n, err := c.Conn.Write(p)
	if err != nil {
		c.sniffUnread()
	}
	return n, err
}

// sniffUnread looks at what the server sent before a write failed. A gRPC
// server resets the connection when it reads HTTP/1; if the reset comes
// under the request's write, net/http returns the write's error and closes
// the connection before its reader has read the settings, still unread in
// the socket: the mismatch would be retried as a broken connection. It
// peeks, so that net/http's reader, if it comes, still reads an answer
// (a collector's early 413) whole.
func (c *clientFirst) sniffUnread() {
	var b [9]byte
	c.sniffFirst(b[:peek(c.Conn, b[:])])
}

// sniffFirst judges the server's first bytes, b, once: only when they are
// enough for a frame header, so that a short read leaves it to the next.
func (c *clientFirst) sniffFirst(b []byte) {
	if len(b) >= 9 {
		c.sniff.Do(func() { c.answeredHTTP2.Store(isSettingsFrame(b)) })
	}
}

// Close ends a Read that waits; it then fails as a closed connection's.
func (c *clientFirst) Close() error {
	err := c.Conn.Close()
	c.open()
	return err
}

// errBodyDetached is what a request body reads after its Export returned.
var errBodyDetached = errors.New("request body read after the export returned")

// bodyOwner guards a request body that every attempt reads, and that no
// reader may touch once detach has run.
type bodyOwner struct {
	mu       sync.Mutex
	data     []byte
	detached bool
}

func (o *bodyOwner) reader() io.ReadCloser { return &bodyReader{o: o} }

func (o *bodyOwner) detach() {
	o.mu.Lock()
	o.detached = true
	o.data = nil
	o.mu.Unlock()
}

// bodyReader reads its owner's data from its own offset.
type bodyReader struct {
	o   *bodyOwner
	off int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	r.o.mu.Lock()
	defer r.o.mu.Unlock()
	if r.o.detached {
		return 0, errBodyDetached
	}
	if r.off >= len(r.o.data) {
		return 0, io.EOF
	}
	n := copy(p, r.o.data[r.off:])
	r.off += n
	return n, nil
}

func (r *bodyReader) Close() error { return nil }
