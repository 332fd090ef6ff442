package transport

import (
	"fmt"
	"strings"
)

// Result is what one Export did.
type Result struct {
	// Rejected is the number of records the collector rejected in a
	// partial success, clamped to [0, n]; it is n when the export failed.
	Rejected int64
	// Err is nil when the records were delivered, maybe partially. For a
	// partial success it describes the rejection, or the collector's
	// warning when it rejected nothing (Rejected 0, Cause PartialSuccess).
	// Its text holds collector text only as passed through Sanitize.
	Err error
	// Cause classifies the outcome, for user-facing warnings.
	Cause Cause
	// Attempts is the number of requests sent or tried.
	Attempts int
	// Status is the status of the last attempt's answer, as the semantic
	// conventions write it: for gRPC the status code's name ("OK",
	// "UNAVAILABLE"; gRPC makes one up when no server answered), for HTTP
	// the status code ("200", "503"); "" when there was none.
	Status string
}

// Cause classifies the outcome of an export.
type Cause int

const (
	// Delivered: the collector accepted every record.
	Delivered Cause = iota
	// Refused: nothing accepted the connection (connection refused, no
	// route to the host, or the name did not resolve).
	Refused
	// TLSMismatch: TLS spoken to a plaintext server, or plaintext to a TLS
	// server.
	TLSMismatch
	// Unauthenticated: gRPC Unauthenticated or PermissionDenied, HTTP 401
	// or 403.
	Unauthenticated
	// Timeout: no answer within the context's deadline or the timeout.
	Timeout
	// Rejected: an answer that a retry would not change, such as gRPC
	// InvalidArgument or HTTP 400 and 413.
	Rejected
	// PartialSuccess: the collector accepted the request but rejected some
	// records, or accepted all with a warning.
	PartialSuccess
	// Unavailable: retryable failures until the time ran out, such as gRPC
	// Unavailable or HTTP 503.
	Unavailable
	// Other: any other failure, such as a certificate that does not verify.
	Other
	// ProtocolMismatch: OTLP/HTTP spoken to a gRPC port, or gRPC to an HTTP
	// one, the commonest OTLP misconfiguration; a retry would not help.
	ProtocolMismatch
)

var causeNames = [...]string{
	Delivered:        "delivered",
	Refused:          "refused",
	TLSMismatch:      "tls mismatch",
	Unauthenticated:  "unauthenticated",
	Timeout:          "timeout",
	Rejected:         "rejected",
	PartialSuccess:   "partial success",
	Unavailable:      "unavailable",
	Other:            "other",
	ProtocolMismatch: "protocol mismatch",
}

// String names the cause in lower case words, such as "tls mismatch".
func (c Cause) String() string {
	if c >= 0 && int(c) < len(causeNames) {
		return causeNames[c]
	}
	return fmt.Sprintf("Cause(%d)", int(c))
}

// Hint returns one sentence a user can act on for this cause, naming
// endpoint (the configured endpoint, passed through Sanitize with no
// secrets), or "" for Delivered and for a cause with no advice of its own
// (Other: the error says why).
func (c Cause) Hint(endpoint string) string {
	ep := Sanitize(endpoint, nil)
	switch c {
	case Delivered, Other:
		return ""
	case Refused:
		return "nothing listens at " + ep + " (connection refused, no route or unknown host): start the collector or correct the endpoint"
	case TLSMismatch:
		if strings.HasPrefix(strings.ToLower(endpoint), "http://") {
			return "the endpoint " + ep + " has http://, which means plaintext, but the server wants TLS: use https://host:port"
		}
		return "the endpoint has no scheme or https://, which means TLS, but the server speaks plaintext: use http://host:port or OTEL_EXPORTER_OTLP_INSECURE=true (if it is insecure already, the server wants TLS: drop OTEL_EXPORTER_OTLP_INSECURE)"
	case Unauthenticated:
		return "the collector refused the credentials (check the authorization header)"
	case Timeout:
		return "the collector at " + ep + " did not answer in time: check that it is reachable and not overloaded, or raise OTEL_EXPORTER_OTLP_TIMEOUT"
	case Rejected:
		return "the collector refused the request and a retry would not change that: its message says why"
	case ProtocolMismatch:
		if strings.HasSuffix(endpoint, ":4317") || strings.Contains(endpoint, ":4317/") {
			return "the endpoint " + ep + " speaks gRPC (port 4317): use OTEL_EXPORTER_OTLP_PROTOCOL=grpc, or the OTLP/HTTP port 4318"
		}
		return "the endpoint " + ep + " does not speak the protocol asked for: OTLP/gRPC listens on port 4317 and OTLP/HTTP on 4318; set OTEL_EXPORTER_OTLP_PROTOCOL to match the port"
	case PartialSuccess:
		return "the collector accepted the request but dropped some records or sent a warning: its message says why"
	case Unavailable:
		return "the collector at " + ep + " stayed unavailable or overloaded through every retry: check its health and capacity"
	}
	return ""
}

// RetryHint is Hint for a failed attempt that will be retried: for a
// collector that is busy or restarting it says so, rather than that every
// retry failed.
func (c Cause) RetryHint(endpoint string) string {
	switch c {
	case Unavailable, Timeout:
		return "retrying: the collector at " + Sanitize(endpoint, nil) + " is busy or restarting"
	case Refused:
		return c.Hint(endpoint) + "; retrying until it does"
	case Other:
		return "retrying"
	}
	return c.Hint(endpoint)
}

// exportError is an error whose text is built only from this package's
// words and sanitized collector text. It unwraps to a sentinel (a context
// error or ErrClosed) at most, never to an error holding raw text.
type exportError struct {
	msg      string
	sentinel error
}

func (e *exportError) Error() string { return e.msg }
func (e *exportError) Unwrap() error { return e.sentinel }

// errorf makes an exportError; its arguments must be sanitized already.
func errorf(sentinel error, format string, args ...any) error {
	return &exportError{msg: fmt.Sprintf(format, args...), sentinel: sentinel}
}

// partial reads a partial success: rejected records, clamped to [0, n],
// and the collector's message, sanitized.
func partial(rejected int64, message string, n int, secrets []string) attempt {
	rejected = clamp(rejected, n)
	if rejected == 0 && message == "" {
		return attempt{cause: Delivered}
	}
	a := attempt{rejected: rejected, cause: PartialSuccess}
	msg := ""
	if message != "" {
		msg = ": " + Sanitize(message, secrets)
	}
	if rejected == 0 {
		a.err = errorf(nil, "collector accepted all %d log records with a warning%s", n, msg)
	} else {
		a.err = errorf(nil, "collector rejected %d of %d log records%s", rejected, n, msg)
	}
	return a
}

// clamp bounds a rejected count to [0, n].
func clamp(v int64, n int) int64 {
	return min(max(v, 0), int64(max(n, 0)))
}
