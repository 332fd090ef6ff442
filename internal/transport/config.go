package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Protocol is the OTLP transport: gRPC or HTTP with protobuf bodies.
type Protocol string

const (
	// GRPC sends requests to the LogsService/Export method of a gRPC server.
	GRPC Protocol = "grpc"
	// HTTPProtobuf POSTs requests as application/x-protobuf to a URL.
	HTTPProtobuf Protocol = "http/protobuf"
)

// DefaultTimeout bounds one attempt of an Export when [Config.Timeout] is
// zero.
const DefaultTimeout = 10 * time.Second

// DefaultRetryElapsed bounds the retries of one Export when
// [Config.RetryElapsed] is zero: twice the OTel SDK's one minute
// (RetryConfig.MaxElapsedTime), so that a collector down for a minute,
// restarted, and the backoff's last wait still fit in it.
const DefaultRetryElapsed = 2 * time.Minute

// Config says where and how a [Client] sends.
type Config struct {
	// Protocol is GRPC or HTTPProtobuf.
	Protocol Protocol
	// Endpoint is where to send, as ParseEndpoint read it, TLS on or off.
	// For HTTPProtobuf, its Path is the URL's, posted to as it is, such as
	// "/v1/logs".
	Endpoint Endpoint
	// TLS is used, cloned, when TLS is on. Nil means the system roots and
	// TLS 1.2 at least.
	TLS *tls.Config
	// Headers go with every export, as gRPC metadata or HTTP headers. Their
	// values are treated as secrets: [Sanitize] redacts them from every
	// text the collector sends back.
	Headers map[string]string
	// Gzip compresses the requests.
	Gzip bool
	// Timeout bounds one attempt, a request and its answer, as the OTLP
	// spec's OTEL_EXPORTER_OTLP_TIMEOUT reads; zero means DefaultTimeout.
	Timeout time.Duration
	// RetryElapsed bounds the retries of one Export: no attempt starts
	// later than this after the first, so an Export takes at most
	// RetryElapsed and one Timeout. Zero means DefaultRetryElapsed.
	RetryElapsed time.Duration
	// OnRetry, when set, is called after each failed attempt that will be
	// retried, with its cause and its error (sanitized), so that a caller
	// can warn before every retry has run out. It must not block.
	OnRetry func(cause Cause, err error)
	// UserAgent, when set, is sent as the User-Agent (gRPC appends its own
	// version to it).
	UserAgent string

	// lookup resolves the endpoint's host name to its replicas; nil means
	// the system's resolver. Only tests set it, to name several replicas.
	lookup lookupFunc
	// reresolve is how often the name is looked up again; zero means
	// resolveEvery. Only tests set it.
	reresolve time.Duration
}

// Mode says how hard one Export tries.
type Mode int

const (
	// Normal retries retryable failures within the retry bound, a refused
	// connection included: a collector that restarts within it loses
	// nothing. A context from WithGiveWay ends the retries sooner.
	Normal Mode = iota
	// Final is for flush and shutdown: when the endpoint refuses connections
	// (connection refused, no route, DNS failure), Export fails at once
	// after one attempt instead of looping. A collector that accepts the
	// connection but is slow still gets the full bound, and its retryable
	// answers are still retried within the context and the timeout.
	Final
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Normal:
		return "normal"
	case Final:
		return "final"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Client sends export requests. Its methods are safe for concurrent use.
type Client interface {
	// Export sends body, a serialized ExportLogsServiceRequest holding n log
	// records. It returns within the sooner of ctx's deadline and the
	// retry bound plus one attempt's timeout, and keeps no reference to body once it returns,
	// so the caller may reuse it.
	Export(ctx context.Context, body []byte, n int, mode Mode) Result
	// Close releases connections; it returns by ctx's deadline. Exports
	// after Close fail with ErrClosed.
	Close(ctx context.Context) error
}

// ErrClosed is the error of an Export on a closed Client.
var ErrClosed = errors.New("the exporter is closed")

// New makes a Client for cfg. It does not connect: the first Export does.
// Its error is only for a bad Config.
func New(cfg Config) (Client, error) {
	if cfg.Endpoint.Host == "" {
		return nil, errors.New("no endpoint")
	}
	if cfg.Timeout < 0 || cfg.RetryElapsed < 0 {
		return nil, fmt.Errorf("negative timeout %v or retry bound %v", cfg.Timeout, cfg.RetryElapsed)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.RetryElapsed == 0 {
		cfg.RetryElapsed = DefaultRetryElapsed
	}
	switch cfg.Protocol {
	case GRPC:
		return newGRPC(cfg, secretsOf(cfg))
	case HTTPProtobuf:
		return newHTTP(cfg, secretsOf(cfg)), nil
	}
	return nil, fmt.Errorf("unknown protocol %q (want %q or %q)", Sanitize(string(cfg.Protocol), nil), GRPC, HTTPProtobuf)
}

// tlsConfig is cfg's TLS configuration, cloned, or the default one.
func tlsConfig(c *tls.Config) *tls.Config {
	if c == nil {
		return &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return c.Clone()
}

// minSecretPart is the shortest text redacted on its own: the credential
// after an authorization scheme, or the value of a header whose name does
// not look like a credential's. A shorter one, such as a tenant "0", would
// be redacted wherever it appears in a collector's message, garbling it,
// and is no secret worth that.
const minSecretPart = 4

// secretsOf lists the texts Sanitize redacts for cfg: the value of every
// header that looks like a credential (LooksLikeCredential), however
// short; every other value of minSecretPart bytes or more; and the
// credential after a scheme ("Bearer abc" gives "abc" too).
func secretsOf(cfg Config) []string {
	var s []string
	for k, v := range cfg.Headers {
		v = strings.TrimSpace(v)
		if v == "" || len(v) < minSecretPart && !LooksLikeCredential(k) {
			continue
		}
		s = append(s, v)
		if _, cred, ok := strings.Cut(v, " "); ok {
			if cred = strings.TrimSpace(cred); len(cred) >= minSecretPart {
				s = append(s, cred)
			}
		}
	}
	// Longest first, so a value is redacted whole before a part of it.
	sortLongestFirst(s)
	return s
}

// credentialWords are parts of the header names that carry credentials:
// authorization, x-api-key, dd-api-key, x-auth-token, cookie, ...
var credentialWords = []string{"auth", "token", "key", "secret", "passw", "credential", "cookie", "session", "signature"}

// LooksLikeCredential tells whether a header of this name usually carries
// a credential.
func LooksLikeCredential(name string) bool {
	name = strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
