package integration

// Two small proxies to put between zaplens and the receiver:
//
//	f := StartFront(t, r.HTTPURL(), hook)  // OTLP/HTTP: hook may answer a request itself (429, 400, ...)
//	f.URL(), f.Requests()
//
//	c := StartTCPCounter(t, r.Endpoint()) // any protocol: counts the bytes the client sends
//	c.Addr(), c.BytesUp()

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FrontAnswer is an answer the front gives instead of the receiver.
type FrontAnswer struct {
	Status int
	Header map[string]string
	Body   string
}

// FrontRequest is a request the front saw.
type FrontRequest struct {
	At        time.Time
	Header    http.Header
	Body      [sha256.Size]byte // the body's digest, to tell a retry from the next request
	Answered  int               // the status the front answered with, 0 when forwarded
	Forwarded bool              // sent on to the receiver
}

// Front is a plaintext HTTP server in front of a receiver's OTLP/HTTP side.
type Front struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []FrontRequest
}

// StartFront serves on a free loopback port; each request is numbered from
// 1 and shown to hook, whose non-nil answer is sent back instead of
// forwarding the request to target (a base URL such as r.HTTPURL(),
// plaintext). Stopped by t.Cleanup.
func StartFront(t testing.TB, target string, hook func(n int, r *http.Request) *FrontAnswer) *Front {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f := &Front{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		n := len(f.seen) + 1
		f.seen = append(f.seen, FrontRequest{At: time.Now(), Header: req.Header.Clone(), Body: sha256.Sum256(body)})
		f.mu.Unlock()
		var a *FrontAnswer
		if hook != nil {
			a = hook(n, req)
		}
		if a == nil {
			f.mu.Lock()
			f.seen[n-1].Forwarded = true
			f.mu.Unlock()
			proxy.ServeHTTP(w, req)
			return
		}
		for k, v := range a.Header {
			w.Header().Set(k, v)
		}
		f.mu.Lock()
		f.seen[n-1].Answered = a.Status
		f.mu.Unlock()
		w.WriteHeader(a.Status)
		_, _ = io.WriteString(w, a.Body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the front's base URL, "http://127.0.0.1:PORT".
func (f *Front) URL() string { return f.srv.URL }

// Requests returns the requests seen so far.
func (f *Front) Requests() []FrontRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FrontRequest(nil), f.seen...)
}

// TCPCounter forwards TCP connections to a target and counts the bytes
// the clients send.
type TCPCounter struct {
	ln    net.Listener
	up    atomic.Int64
	mu    sync.Mutex
	conns []net.Conn
}

// StartTCPCounter listens on a free loopback port and forwards each
// connection to target ("host:port"). Stopped by t.Cleanup.
func StartTCPCounter(t testing.TB, target string) *TCPCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &TCPCounter{ln: ln}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() {
				_, _ = io.Copy(countingWriter{out, &c.up}, in)
				_ = out.Close()
			}()
			go func() {
				_, _ = io.Copy(in, out)
				_ = in.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, conn := range c.conns {
			_ = conn.Close()
		}
	})
	return c
}

// Addr is "127.0.0.1:PORT".
func (c *TCPCounter) Addr() string { return c.ln.Addr().String() }

// BytesUp is the bytes clients sent so far, counted as they pass.
func (c *TCPCounter) BytesUp() int64 { return c.up.Load() }

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (cw countingWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n.Add(int64(n))
	return n, err
}
