package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// connFailure is a failure to reach or to talk to the endpoint at the
// connection level, before any answer from a collector.
type connFailure struct {
	cause     Cause
	what      string // this package's words for it
	retryable bool   // in Normal mode; Final mode never retries a Refused
	// again: the next attempt goes at once. The connection broke; or, not
	// retryable, the failure may be a restart, and is told if it recurs.
	again bool
	// says, when set, is told instead of the error's own text, which then
	// names only the workings of net/http or gRPC.
	says string
}

// attempt is the failed attempt f makes, over protocol to endpoint; detail
// is the error's text, sanitized.
func (f connFailure) attempt(protocol, endpoint, detail string) attempt {
	if f.says != "" {
		detail = f.says
	}
	return attempt{cause: f.cause, retryable: f.retryable, again: f.again,
		err: errorf(nil, "%s export to %s: %s: %s", protocol, endpoint, f.what, detail)}
}

// answeredHTTP2 is OTLP/HTTP sent to a gRPC server.
var answeredHTTP2 = connFailure{cause: ProtocolMismatch, what: "the endpoint speaks another protocol",
	says: "it answered in HTTP/2 frames, as a gRPC server does"}

// classifyConn reads a connection-level error, from its chain when err is
// not nil and from text (gRPC gives only text). plaintext says whether the
// client spoke plaintext. ok is false when nothing specific matched.
func classifyConn(err error, text string, plaintext bool) (f connFailure, ok bool) {
	var (
		dnsErr     *net.DNSError
		recordErr  tls.RecordHeaderError
		verifyErr  *tls.CertificateVerificationError
		authErr    x509.UnknownAuthorityError
		hostErr    x509.HostnameError
		invalidErr x509.CertificateInvalidError
	)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(text, s) {
				return true
			}
		}
		return false
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || has("connection refused"):
		return connFailure{cause: Refused, what: "connection refused", retryable: true}, true
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		has("no route to host", "network is unreachable"):
		return connFailure{cause: Refused, what: "no route to the host", retryable: true}, true
	case errors.As(err, &dnsErr) || has("no such host", "produced zero addresses", "name resolver error", "server misbehaving"):
		return connFailure{cause: Refused, what: "the host name did not resolve", retryable: true}, true
	case errors.As(err, &recordErr) || has("first record does not look like a TLS handshake", "server gave HTTP response to HTTPS client"):
		return connFailure{cause: TLSMismatch, what: "TLS handshake failed: the server speaks plaintext"}, true
	case plaintext && has(`malformed HTTP response "\x15\x03`,
		"Client sent an HTTP request to an HTTPS server", "plain HTTP request was sent to HTTPS port"):
		return connFailure{cause: TLSMismatch, what: "the server expects TLS but the client spoke plaintext"}, true
	case plaintext && has("error reading server preface: EOF", "error reading server preface: read tcp",
		"error reading server preface: connection reset"):
		// A TLS server drops a plaintext preface; so does a collector
		// that is going down or restarting. Told as the likelier
		// mismatch, and tried once more at once: a mismatch fails alike,
		// a restart does not, and must not lose the batch.
		return connFailure{cause: TLSMismatch, what: "the server expects TLS but the client spoke plaintext", again: true}, true
	case has(`malformed HTTP response "\x00\x00`):
		// An HTTP/1 client reading a gRPC server's SETTINGS frame.
		return answeredHTTP2, true
	case has("frame header looked like an HTTP/1.1 header"):
		return connFailure{cause: ProtocolMismatch, what: "the endpoint speaks another protocol",
			says: "it answered in HTTP/1.1, as an OTLP/HTTP server does"}, true
	case has("readLoopPeekFailLocked"):
		// net/http's name for a kept-alive connection that the server
		// broke, or wrote on, while no request was on it.
		return connFailure{cause: Unavailable, what: "the connection broke", retryable: true, again: true,
			says: "the collector closed an idle connection, or wrote on it unasked"}, true
	case errors.As(err, &verifyErr) || errors.As(err, &authErr) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || has("x509:", "failed to verify certificate"):
		return connFailure{cause: Other, what: "TLS certificate verification failed"}, true
	case has("remote error: tls:"):
		return connFailure{cause: Other, what: "the server ended the TLS handshake"}, true
	case errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		has("use of closed network connection", "connection reset by peer", "broken pipe"):
		// A kept-alive connection the collector had closed, or a server
		// that hung up on a protocol it does not speak (net/http then
		// closes the connection under its own write). A new connection
		// tells which, at once.
		return connFailure{cause: Unavailable, what: "the connection broke", retryable: true, again: true}, true
	}
	return connFailure{}, false
}
