package transport

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestClassifyConn(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		text      string
		plaintext bool
		cause     Cause
		ok        bool
	}{
		{"refused errno", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "", false, Refused, true},
		{"refused text", nil, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`, false, Refused, true},
		{"no route", fmt.Errorf("dial: %w", syscall.EHOSTUNREACH), "", false, Refused, true},
		{"dns", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, "", false, Refused, true},
		{"grpc resolver", nil, "name resolver error: produced zero addresses", false, Refused, true},
		{"tls to plaintext", nil, `transport: authentication handshake failed: tls: first record does not look like a TLS handshake`, false, TLSMismatch, true},
		{"https to http", errors.New("http: server gave HTTP response to HTTPS client"), "http: server gave HTTP response to HTTPS client", false, TLSMismatch, true},
		{"plaintext to tls grpc", nil, `connection error: desc = "error reading server preface: EOF"`, true, TLSMismatch, true},
		{"preface EOF over tls", nil, `connection error: desc = "error reading server preface: EOF"`, false, Other, false},
		{"go tls server", nil, "Client sent an HTTP request to an HTTPS server.", true, TLSMismatch, true},
		{"tls alert as http", nil, `net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x15\x03\x01\x00\x02\x02"`, true, TLSMismatch, true},
		{"unknown authority", x509.UnknownAuthorityError{}, "", false, Other, true},
		{"verify text", nil, "tls: failed to verify certificate: x509: certificate signed by unknown authority", false, Other, true},
		{"tls alert", nil, "remote error: tls: certificate required", false, Other, true},
		{"reset", nil, "read: connection reset by peer", false, Unavailable, true},
		{"http to grpc", nil, `net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x06\x04"`, true, ProtocolMismatch, true},
		{"grpc to http", nil, "http2: frame too large, note that the frame header looked like an HTTP/1.1 header", true, ProtocolMismatch, true},
		{"idle connection written on", nil, "readLoopPeekFailLocked: %!w(<nil>)", true, Unavailable, true},
		{"idle connection reset", nil, "readLoopPeekFailLocked: read: connection reset by peer", true, Unavailable, true},
	}
	for _, tt := range tests {
		text := tt.text
		if text == "" && tt.err != nil {
			text = tt.err.Error()
		}
		f, ok := classifyConn(tt.err, text, tt.plaintext)
		if ok != tt.ok || ok && f.cause != tt.cause {
			t.Errorf("%s: got %v %v, want %v %v", tt.name, f.cause, ok, tt.cause, tt.ok)
		}
		if ok && f.cause != Refused && f.cause != Unavailable && f.retryable {
			t.Errorf("%s: %v is retryable", tt.name, f.cause)
		}
		if msg := f.attempt("http", "e", text).err.Error(); ok && strings.Contains(msg, "readLoopPeekFailLocked") {
			t.Errorf("%s: %q names net/http's workings", tt.name, msg)
		}
	}
}
