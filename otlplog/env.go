package otlplog

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zaplens/zaplens/internal/transport"
)

// The environment is read here rather than left to otlploggrpc and the SDK:
// they skip a bad value with a message that may quote it (a header value, an
// endpoint with credentials). Every value below is validated. A bad one is
// treated as not set, as the OpenTelemetry spec says of an unparsable
// value, and told once on the loss writer, so that a typo never turns
// shipping off; only what makes shipping impossible (an unsupported
// protocol, an invalid option or file setting) fails NewLoggerProvider.
// Which of the two a bad value is, setting.bad decides, by where the value
// came from. No message quotes a header or credential.

// ignoredValue is a variable's value that cannot be used: it becomes a
// warning, and the setting keeps its default.
type ignoredValue struct{ err error }

func (e ignoredValue) Error() string { return e.err.Error() }

// ignored marks err, about a variable's value, as one to warn of and go
// on without.
func ignored(err error) error {
	if err == nil {
		return nil
	}
	return ignoredValue{err}
}

// bad is the rule, decided here for every setting: a value a variable
// gave that cannot be used is treated as not set, def taking its place,
// and is told; one an option or the configuration file gave makes
// shipping impossible. A nil err is no bad value.
func (s *setting[T]) bad(def T, err error) error {
	if err == nil || !s.env {
		return err
	}
	*s = setting[T]{value: def}
	return ignored(err)
}

// lookup returns, for a setting no option or file gave, the first
// non-empty variable of keys, the signal-specific one first, and marks
// the setting given by it; "" if there is none. The caller puts what it
// reads of the value, or calls it bad.
func (s *setting[T]) lookup(keys ...string) string {
	if s.set {
		return ""
	}
	v, k := lookupEnv(keys...)
	if v != "" {
		s.set, s.env, s.from = true, true, k
	}
	return v
}

// said is a setting's value as it was given, for messages: VARIABLE=value
// or Option(value), a file's key as an option, a string quoted.
func said[T any](s *setting[T]) string {
	v := fmt.Sprint(s.value)
	if str, ok := any(s.value).(string); ok {
		v = strconv.Quote(str)
	}
	if s.env {
		return s.from + "=" + v
	}
	return s.from + "(" + v + ")"
}

// triage turns the ignored values among errs into warnings and returns the
// rest, the errors that make shipping impossible.
func (c *providerConfig) triage(errs ...error) error {
	var fatal []error
	for _, err := range errs {
		switch e := err.(type) {
		case nil:
		case ignoredValue:
			c.warnings = append(c.warnings, e.Error()+"; ignored, as if not set")
		case interface{ Unwrap() []error }:
			fatal = append(fatal, c.triage(e.Unwrap()...))
		default:
			fatal = append(fatal, err)
		}
	}
	return errors.Join(fatal...)
}

// lookupEnv returns the first non-empty variable of keys, the signal-specific
// one first, and its name for messages. With OTEL_CONFIG_FILE set, the
// variables the file replaces are not read (fileReplaces).
func lookupEnv(keys ...string) (value, key string) {
	file := configFileSet()
	for _, k := range keys {
		if file && fileReplaces(k) {
			continue
		}
		if v := os.Getenv(k); v != "" {
			return v, k
		}
	}
	return "", ""
}

// resolveEnv fills every setting no option set from the environment, then
// the defaults, and validates the result. A bad variable becomes a warning
// and is treated as not set; what it returns makes shipping impossible.
//
// A provider that is off reads nothing more, and one that does not export
// over OTLP ignores the OTLP variables: a leftover bad value in a setting
// that is not used must not even be warned of.
func (c *providerConfig) resolveEnv() error {
	if err := c.triage(c.resolveSwitches()); err != nil || c.off() {
		return err
	}
	var otlp error
	if c.exportFunc == nil && c.exporterName.value == "otlp" {
		otlp = c.resolveOTLP()
	}
	return c.triage(otlp, c.resolveBatch(), c.resolveLimits(), c.checkResourceEnv())
}

// off tells whether the provider is a no-op by configuration.
func (c *providerConfig) off() bool {
	return c.disabled.value || (c.exporterName.value == "none" && c.exportFunc == nil)
}

func (c *providerConfig) resolveSwitches() error {
	errs := []error{resolveBool(&c.disabled, "OTEL_SDK_DISABLED")}
	if v := c.exporterName.lookup("OTEL_LOGS_EXPORTER"); v != "" {
		c.exporterName.put(v)
	}
	switch name := strings.ToLower(strings.TrimSpace(c.exporterName.value)); name {
	case "", "otlp":
		c.exporterName.value = "otlp"
	case "console", "none":
		c.exporterName.value = name
	default:
		err := fmt.Errorf("%s: want otlp, console or none", said(&c.exporterName))
		if c.exporterName.env {
			err = fmt.Errorf("%w (one only)", err) // the spec's variable is a list
		}
		errs = append(errs, c.exporterName.bad("otlp", err))
	}
	return errors.Join(errs...)
}

// resolveBool reads a boolean variable into a setting no option set; only
// true and false, in any case, are accepted, so that "1" or "yes" fail
// loudly rather than mean false.
func resolveBool(s *setting[bool], keys ...string) error {
	v := s.lookup(keys...)
	switch b := strings.ToLower(strings.TrimSpace(v)); b {
	case "":
	case "true", "false":
		s.put(b == "true")
	default:
		return s.bad(false, fmt.Errorf("%s=%q: want true or false", s.from, v))
	}
	return nil
}

func (c *providerConfig) resolveOTLP() error {
	if err := c.resolveProtocol(); err != nil {
		return err // nothing can be sent: the rest does not matter
	}
	// The insecure variables apply to an endpoint without a scheme only
	// (target).
	errs := []error{resolveBool(&c.insecure, "OTEL_EXPORTER_OTLP_LOGS_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE")}
	if !c.endpoint.set {
		errs = append(errs, c.resolveEndpoint())
	}
	errs = append(errs, c.resolveHeaders())
	if !c.tlsConfig.set {
		cfg, err := envTLS()
		errs = append(errs, err)
		c.tlsConfig.put(cfg)
	}
	errs = append(errs, c.resolveCompression(), resolveMillis(&c.otlpTimeout, DefaultOTLPTimeout, 1,
		"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"),
		resolveMillis(&c.retryElapsed, DefaultRetryMaxElapsed, 1, "ZAPLENS_RETRY_MAX_ELAPSED"))
	return errors.Join(errs...)
}

// resolveEndpoint takes the first endpoint variable whose value parses,
// else the protocol's default endpoint.
func (c *providerConfig) resolveEndpoint() error {
	var errs []error
	for _, k := range []string{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		v := c.endpoint.lookup(k)
		if v == "" {
			continue
		}
		if _, err := transport.ParseEndpoint(v, transport.Protocol(c.protocol.value), c.insecure.value); err != nil {
			errs = append(errs, c.endpoint.bad("", fmt.Errorf("%s: %w", k, err)))
			continue
		}
		c.endpoint.put(v)
		return errors.Join(errs...)
	}
	c.endpoint = setting[string]{value: DefaultEndpoint, from: "the default endpoint"}
	if c.protocol.value == string(transport.HTTPProtobuf) {
		c.endpoint.value = DefaultHTTPEndpoint
	}
	return errors.Join(errs...)
}

// resolveHeaders reads OTEL_EXPORTER_OTLP_[LOGS_]HEADERS, the first that
// parses, as otlploggrpc reads them: a signal-specific value that does not
// parse gives way to the general one. Headers an option or the file gave
// are checked by the rules of the transport.
func (c *providerConfig) resolveHeaders() error {
	var errs []error
	for _, k := range []string{"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"} {
		if v := c.headers.lookup(k); c.headers.env {
			h, err := parseHeaders(k, v, c.protocol.value)
			if err == nil {
				c.headers.value = h
				return errors.Join(errs...)
			}
			errs = append(errs, c.headers.bad(map[string]string{}, err))
		}
	}
	h, err := checkHeaders(c.headers.from, c.headers.value, c.protocol.value)
	c.headers.value = h
	return errors.Join(append(errs, c.headers.bad(map[string]string{}, err))...)
}

// resolveCompression reads OTEL_EXPORTER_OTLP_[LOGS_]COMPRESSION: gzip or
// none.
func (c *providerConfig) resolveCompression() error {
	if v := c.compression.lookup("OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"); v != "" {
		c.compression.put(v)
	}
	switch c.compression.value {
	case "", "none", "gzip":
		return nil
	}
	return c.compression.bad("", fmt.Errorf("%s: want gzip or none", said(&c.compression)))
}

// checkPlaintextHeaders keeps headers, which usually hold a token, off a
// plaintext connection nobody asked for: anyone on the machine may listen
// on localhost:4317. Over a plaintext endpoint the user set, they go; a
// warning tells of those that look like credentials when the endpoint is
// not on this host, the one case where the network may read them. A
// stream-field header to a local collector is no secret worth a line at
// every start of every rank.
func (c *providerConfig) checkPlaintextHeaders(t target) error {
	if len(c.headers.value) == 0 || t.TLS {
		return nil
	}
	if !c.endpoint.set {
		err := fmt.Errorf("%s is set but no endpoint is: headers are not sent in plaintext to the default endpoint, which any local user can listen on; set OTEL_EXPORTER_OTLP_ENDPOINT (https://... for TLS)", c.headers.from)
		return c.triage(c.headers.bad(nil, err))
	}
	if creds := credentialHeaders(c.headers.value); len(creds) > 0 && !loopbackHost(t.Host) {
		c.warnings = append(c.warnings, fmt.Sprintf("the headers of %s (%s) travel in plaintext to the endpoint of %s; use https:// to encrypt them",
			c.headers.from, strings.Join(creds, ", "), c.endpoint.from))
	}
	return nil
}

// credentialHeaders are the names of h, lowercase, that look like
// credentials, sorted.
func credentialHeaders(h map[string]string) []string {
	var out []string
	for k := range h {
		if transport.LooksLikeCredential(k) {
			out = append(out, printable(k))
		}
	}
	slices.Sort(out)
	return out
}

// loopbackHost tells whether host is this host: localhost or a loopback
// address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// resolveProtocol reads OTEL_EXPORTER_OTLP_[LOGS_]PROTOCOL: grpc or
// http/protobuf; http/json is refused with a word on what to use. A
// protocol zaplens does not speak makes shipping impossible, whoever asked
// for it.
func (c *providerConfig) resolveProtocol() error {
	if v := c.protocol.lookup("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); v != "" {
		c.protocol.put(strings.TrimSpace(v))
	}
	switch c.protocol.value {
	case "":
		c.protocol.value = string(transport.GRPC)
	case string(transport.GRPC), string(transport.HTTPProtobuf):
	case "http/json":
		return fmt.Errorf("%s: not supported; use grpc or http/protobuf, which every collector accepts", said(&c.protocol))
	default:
		return fmt.Errorf("%s: want grpc or http/protobuf", said(&c.protocol))
	}
	return nil
}

// target is where and how the transport sends.
type target struct {
	protocol transport.Protocol
	// Endpoint is what the transport is given: for OTLP/HTTP, its Path is
	// the path the logs are posted to; gRPC has none.
	transport.Endpoint
	display string // for messages: scheme, host and port
}

// target resolves where and how to send. The insecure variables apply only
// to an endpoint without a scheme, as the OTLP spec says; WithInsecure
// turns TLS off whatever the scheme.
func (c *providerConfig) target() (target, error) {
	p := transport.Protocol(c.protocol.value)
	e, err := transport.ParseEndpoint(c.endpoint.value, p, c.insecure.value)
	if err != nil {
		return target{}, fmt.Errorf("%s: %w", c.endpoint.from, err)
	}
	t := target{protocol: p, Endpoint: e}
	if c.insecure.value && !c.insecure.env { // WithInsecure's
		if t.TLS && c.endpoint.from != "WithEndpoint" {
			c.warnings = append(c.warnings, fmt.Sprintf("WithInsecure turns TLS off for the endpoint of %s, which asks for it", c.endpoint.from))
		}
		t.TLS = false
	}
	if err := c.checkPlaintextHeaders(t); err != nil {
		return t, err
	}
	t.display = "https://" + t.HostPort()
	if !t.TLS {
		t.display = "http://" + t.HostPort()
	}
	if t.protocol == transport.GRPC {
		if t.Path != "" && t.Path != "/" {
			c.warnings = append(c.warnings, fmt.Sprintf("%s has a path, which OTLP/gRPC does not use: sending to %s (OTLP/HTTP, which uses paths such as /v1/logs, listens on port 4318: set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)", c.endpoint.from, t.display))
		}
		t.Path = ""
		return t, nil
	}
	// OTLP/HTTP: the generic variable names a base URL, to which the signal's
	// path is added; the logs variable is the URL itself.
	switch {
	case c.endpoint.from == "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT":
	case c.endpoint.from == "OTEL_EXPORTER_OTLP_ENDPOINT":
		t.Path = strings.TrimSuffix(t.Path, "/") + "/v1/logs"
	case t.Path == "" || t.Path == "/":
		t.Path = "/v1/logs"
	}
	if t.Path == "" {
		t.Path = "/"
	}
	return t, nil
}

// parseHeaders reads OTEL_EXPORTER_OTLP_[LOGS_]HEADERS (named by key); a
// blank value is no headers.
func parseHeaders(key, s string, protocol string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]string{}, nil
	}
	h, err := parsePairs(key, s, headerValue)
	if err != nil {
		return nil, err
	}
	return checkHeaders(key, h, protocol)
}

// parsePairs reads the key=value pairs of variable from, separated by
// commas, keys trimmed and each value read by value, as the OTel spec
// writes headers and resource attributes. Errors give the position and
// key of a bad pair, never its value, which may be a token.
func parsePairs(from, s string, value func(raw string) (string, error)) (map[string]string, error) {
	pairs := map[string]string{}
	if s == "" {
		return pairs, nil
	}
	for i, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: pair %d is not key=value (value not shown)", from, i+1)
		}
		val, err := value(v)
		if err != nil {
			return nil, fmt.Errorf("%s: pair %d (%s): bad percent-encoding (value not shown)", from, i+1, printable(k))
		}
		pairs[k] = val
	}
	return pairs, nil
}

// headerValue percent-decodes a header's value, then trims it, as
// otlploggrpc and otlploghttp read one (convHeaders): an encoded newline
// or space at an end, a token file's newline, is not sent.
func headerValue(raw string) (string, error) {
	v, err := url.PathUnescape(raw)
	return strings.TrimSpace(v), err
}

// resourceValue trims a resource attribute's value, then percent-decodes
// it, as sdk/resource reads OTEL_RESOURCE_ATTRIBUTES: an encoded space at
// an end is kept.
func resourceValue(raw string) (string, error) {
	return url.PathUnescape(strings.TrimSpace(raw))
}

// checkHeaders refuses at start what the transport would refuse on every
// export, by its own rules: gRPC metadata keys are lowercase letters,
// digits, '-', '_' and '.', and not grpc-; HTTP keys are tokens. Keys are
// one header whatever their case; values must be printable ASCII. It
// returns the headers with lowercase keys. Errors name the key, never the
// value.
func checkHeaders(from string, h map[string]string, protocol string) (map[string]string, error) {
	out := make(map[string]string, len(h))
	for k, v := range h {
		lk := strings.ToLower(k)
		if _, dup := out[lk]; dup {
			return nil, fmt.Errorf("%s: header %s is given twice, in different cases", from, printable(lk))
		}
		if !validHeaderKey(lk, protocol) {
			return nil, fmt.Errorf("%s: header key %s is not valid for %s%s", from, printable(k), protocol, headerKeyRule(protocol))
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return nil, fmt.Errorf("%s: header %s: the value has a character that is not printable ASCII (value not shown)", from, printable(lk))
			}
		}
		out[lk] = v
	}
	return out, nil
}

func headerKeyRule(protocol string) string {
	if protocol == string(transport.GRPC) {
		return " (lowercase letters, digits, '-', '_' and '.', not starting with grpc-)"
	}
	return " (an HTTP token)"
}

// validHeaderKey is gRPC's rule for metadata keys, or the HTTP token rule.
func validHeaderKey(k, protocol string) bool {
	if k == "" {
		return false
	}
	if protocol == string(transport.GRPC) {
		if strings.HasPrefix(k, "grpc-") {
			return false
		}
		for _, r := range k {
			if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z') {
				return false
			}
		}
		return true
	}
	for _, r := range k {
		if r > 127 || !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}

// printable quotes a key for a message, escaped, so that a key cannot
// forge a line; keys are not secrets.
func printable(k string) string { return strconv.Quote(k) }

// envTLS builds the TLS configuration from the certificate variables: the
// CA bundle to trust, and the client certificate and key, which must come
// together. Nil when none is set, or none could be used: the system roots
// are used. A file that cannot be used is told and treated as not set.
func envTLS() (*tls.Config, error) {
	var cfg tls.Config
	var errs []error
	set := false
	if path, k := lookupEnv("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"); path != "" {
		pool, err := loadCertPool(path)
		if err != nil {
			errs = append(errs, ignored(fmt.Errorf("%s: %w", k, err)))
		} else {
			cfg.RootCAs, set = pool, true
		}
	}
	cert, kc := lookupEnv("OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
	key, kk := lookupEnv("OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY")
	switch {
	case cert != "" && key != "":
		pair, err := loadKeyPair(cert, key)
		if err != nil {
			errs = append(errs, ignored(fmt.Errorf("%s and %s: %w", kc, kk, err)))
		} else {
			cfg.Certificates, set = []tls.Certificate{pair}, true
		}
	case cert != "" || key != "":
		errs = append(errs, ignored(errors.New("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (or their LOGS_ forms) must be set together")))
	}
	if !set {
		return nil, errors.Join(errs...)
	}
	return &cfg, errors.Join(errs...)
}

func loadCertPool(path string) (*x509.CertPool, error) {
	pem, err := readPEMFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

func loadKeyPair(certPath, keyPath string) (tls.Certificate, error) {
	cert, err := readPEMFile(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := readPEMFile(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// maxPEMFile bounds a certificate or key file, and a configuration file:
// far more than any.
const maxPEMFile = 1 << 20

// readPEMFile reads a certificate or key file once, and only a regular file
// of at most maxPEMFile bytes: a FIFO would block the program's start, and
// /dev/zero would read until memory ran out.
func readPEMFile(path string) ([]byte, error) {
	// Non-blocking, so that opening a FIFO returns at once, to be refused.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > maxPEMFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxPEMFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	if err == nil && len(b) > maxPEMFile {
		err = fmt.Errorf("%s: larger than %d bytes", path, maxPEMFile)
	}
	return b, err
}

// exportBound is the default bound of one export by the pipeline: over
// OTLP, its retries' and one attempt's, so that it cuts no retry short
// (the OTLP timeout bounds each attempt, as the spec's text has it).
func (c *providerConfig) exportBound() time.Duration {
	if c.retryElapsed.value > 0 {
		return c.retryElapsed.value + c.otlpTimeout.value
	}
	return DefaultExportTimeout
}

// minRequestBytes keeps a request bound large enough for a record with a
// few cut values.
const minRequestBytes = 64 << 10

func (c *providerConfig) resolveBatch() error {
	errs := []error{
		resolveInt(&c.queueSize, 0, 1, "OTEL_BLRP_MAX_QUEUE_SIZE"),
		resolveInt(&c.queueBytes, DefaultQueueBytes, 1024, "ZAPLENS_QUEUE_BYTES"),
		resolveInt(&c.requestBytes, DefaultRequestBytes, minRequestBytes, "ZAPLENS_REQUEST_BYTES"),
		resolveInt(&c.batchSize, DefaultBatchSize, 1, "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE"),
		resolveMillis(&c.scheduleDelay, DefaultScheduleDelay, 1, "OTEL_BLRP_SCHEDULE_DELAY"),
		resolveMillis(&c.exportTimeout, c.exportBound(), 1, "OTEL_BLRP_EXPORT_TIMEOUT"),
	}
	// The SDK clamps a batch larger than the queue without a word; here,
	// by the rule, the batch size's variable is ignored, else the queue
	// size's, and two options or file settings fail. The default batch is
	// lowered to a quarter of a record bound, the SDK's own ratio (512 of
	// 2048): a batch the size of the queue would leave only when the queue
	// is full, and every record logged while it is sent would be dropped.
	q := c.queueSize.value // 0: only bytes bound the queue
	if q > 0 && c.batchSize.set && c.batchSize.value > q {
		// Each is named by who gave it; a variable, as its warning always
		// read, with the option that overrides it.
		named := func(s *setting[int], option string) string {
			if s.env {
				return s.from + " or " + option
			}
			return s.from
		}
		err := fmt.Errorf("batch size %d (%s) is larger than queue size %d (%s)",
			c.batchSize.value, named(&c.batchSize, "WithBatchSize"), q, named(&c.queueSize, "WithQueueSize"))
		if c.batchSize.env {
			errs = append(errs, c.batchSize.bad(DefaultBatchSize, err))
		} else {
			errs = append(errs, c.queueSize.bad(0, err))
			q = c.queueSize.value
		}
	}
	if q > 0 && !c.batchSize.set {
		c.batchSize.value = max(1, min(c.batchSize.value, q/4))
	}
	return errors.Join(errs...)
}

// checkResourceEnv ignores an OTEL_RESOURCE_ATTRIBUTES the SDK would take
// half-read: a pair without "=" or with a bad percent escape, which it
// would send undecoded and print a fragment of. Unlike headers, a blank
// value is refused: the SDK reads it as a pair without "=". Invalid UTF-8
// is not refused: the encoder repairs it to U+FFFD, as it does in records.
func (c *providerConfig) checkResourceEnv() error {
	_, err := parsePairs("OTEL_RESOURCE_ATTRIBUTES", os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), resourceValue)
	c.skipResourceEnv = err != nil
	return ignored(err)
}

func (c *providerConfig) resolveLimits() error {
	return errors.Join(
		resolveInt(&c.attrCount, -1, 0, "OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT"),
		resolveInt(&c.attrValueLen, -1, 0, "OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT"),
		resolveBool(&c.recordUID, "ZAPLENS_RECORD_UID"),
	)
}

// resolveInt reads an integer setting no option or file set from the
// first set variable of keys and checks it against least, by the rule
// (bad). It marks the setting set only when a value was given, so that the
// defaults stay distinguishable.
func resolveInt(s *setting[int], def, least int, keys ...string) error {
	return resolveIntIn(s, def, least, math.MaxInt, "", keys...)
}

// maxMillis is the most milliseconds a time.Duration holds; more is
// durationOverflow.
const (
	maxMillis        = math.MaxInt64 / int64(time.Millisecond)
	durationOverflow = "more milliseconds than a duration holds"
)

// resolveIntIn is resolveInt for variables whose integers count unit, for
// messages: "" for a count, else milliseconds, of a duration, which holds
// at most most of them. A variable is read as 64 bits on every platform.
func resolveIntIn[T int | int64](s *setting[T], def, least T, most int64, unit string, keys ...string) error {
	if v := s.lookup(keys...); v != "" {
		inUnit, tooMany := "", fmt.Sprintf("more than %d", most)
		if unit != "" {
			inUnit, tooMany = " ("+unit+")", durationOverflow
		}
		// Out of range, ParseInt gives the nearer end: the least bound
		// refuses the lower, over the upper.
		trimmed := strings.TrimSpace(v)
		n, err := strconv.ParseInt(trimmed, 10, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
			return s.bad(def, fmt.Errorf("%s=%q: not an integer%s", s.from, v, inUnit))
		case n > most || (err != nil && n > 0):
			return s.bad(def, fmt.Errorf("%s=%s: %s", s.from, trimmed, tooMany))
		case n < int64(least):
			return s.bad(def, fmt.Errorf("%s=%s: must be at least %d", s.from, trimmed, least))
		}
		s.put(T(n))
		return nil
	}
	if !s.set {
		s.value = def
		return nil
	}
	if s.value < least {
		return s.bad(def, fmt.Errorf("%s: must be at least %d", said(s), least))
	}
	return nil
}

// resolveMillis is resolveInt for durations, which OTel variables give in
// milliseconds. A duration an option or the file gave is checked as it
// is, any part of a millisecond counting as one.
func resolveMillis(s *setting[time.Duration], def time.Duration, least int, keys ...string) error {
	if s.set {
		ms := s.value / time.Millisecond
		if s.value > 0 && ms == 0 {
			ms = 1 // a sub-millisecond option is still a positive one
		}
		if ms < time.Duration(least) {
			return s.bad(def, fmt.Errorf("%s: must be at least %v", said(s), time.Duration(least)*time.Millisecond))
		}
		return nil
	}
	var ms setting[int64]
	err := resolveIntIn(&ms, -1, int64(least), maxMillis, "milliseconds", keys...)
	*s = setting[time.Duration]{value: def, set: ms.set, env: ms.env, from: ms.from}
	if ms.set {
		s.value = time.Duration(ms.value) * time.Millisecond
	}
	return err
}
