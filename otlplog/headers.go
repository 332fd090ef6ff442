package otlplog

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/zaplens/zaplens/internal/confval"
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
			out = append(out, confval.Printable(k))
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
	h, err := confval.ParsePairs(key, s, confval.HeaderValue)
	if err != nil {
		return nil, err
	}
	return checkHeaders(key, h, protocol)
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
			return nil, fmt.Errorf("%s: header %s is given twice, in different cases", from, confval.Printable(lk))
		}
		if !validHeaderKey(lk, protocol) {
			return nil, fmt.Errorf("%s: header key %s is not valid for %s%s", from, confval.Printable(k), protocol, headerKeyRule(protocol))
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return nil, fmt.Errorf("%s: header %s: the value has a character that is not printable ASCII (value not shown)", from, confval.Printable(lk))
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
