package otlplog

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/zaplens/zaplens/internal/transport"
)

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
