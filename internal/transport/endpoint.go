package transport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Endpoint is an endpoint ParseEndpoint accepted: the caller validates the
// user's setting with it and hands it to [Config] as it is, so that what
// was checked is what is dialled.
type Endpoint struct {
	// Host is a name or an address; an IPv6 address has no brackets, and
	// its zone, if any, is unescaped.
	Host string
	// Port is as written, or the scheme's: 443 with TLS, 80 without.
	Port int
	// TLS says whether the connection uses TLS.
	TLS bool
	// Path is the URL's path, escaped as written; "" when there is none.
	// OTLP/HTTP posts to it; gRPC has no use for it.
	Path string
}

// HostPort is "host:port" as a URL writes it, for gRPC's target and for
// messages: an IPv6 address in brackets, its zone escaped ("%25").
func (e Endpoint) HostPort() string {
	return strings.Replace(e.dialAddr(), "%", "%25", 1)
}

// dialAddr is "host:port" as the dialer takes it, the zone unescaped.
func (e Endpoint) dialAddr() string {
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// url is where OTLP/HTTP posts. A scheme's own port is left out, so that
// the Host header names the host as the user wrote it, as curl and
// otlploghttp send it.
func (e Endpoint) url() *url.URL {
	u := &url.URL{Scheme: "https", Host: e.dialAddr(), RawPath: e.Path}
	if !e.TLS {
		u.Scheme = "http"
	}
	if e.Port == schemePort(e.TLS) {
		u.Host = e.Host
		if strings.Contains(e.Host, ":") {
			u.Host = "[" + e.Host + "]"
		}
	}
	// Path came escaped from url.URL.EscapedPath, so it unescapes.
	u.Path, _ = url.PathUnescape(e.Path)
	return u
}

// schemePort is the port of https, or of http when tls is false.
func schemePort(tls bool) int {
	if tls {
		return 443
	}
	return 80
}

// ParseEndpoint reads an OTLP endpoint: a URL with an http or https
// scheme, or a bare host:port as people write for gRPC, which means TLS
// unless insecure. Without a port, the endpoint is the scheme's, written or
// meant by TLS: 443 or 80, whatever the protocol, as otlploghttp dials it
// and as otlploggrpc dials https (it dials 443 for http too, which no
// plaintext server listens on). Hosted backends publish https://host/path;
// 4317 and 4318 are the ports of the default endpoint, which names them,
// so the protocol is not read. An endpoint is used
// as written or refused, never rebuilt into something read differently:
// otlploggrpc would parse "host:4317" as a URL of scheme "host" and dial an
// empty target. Credentials in the URL are refused: headers carry tokens.
// Messages show the endpoint without credentials, path or query.
func ParseEndpoint(raw string, _ Protocol, insecure bool) (Endpoint, error) {
	raw = strings.TrimSpace(raw)
	written := strings.Contains(raw, "://")
	if !written {
		raw = "scheme-less://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %s: not a URL or host:port", redactEndpoint(raw))
	}
	if u.User != nil {
		return Endpoint{}, fmt.Errorf("endpoint %s: credentials in the URL are not sent; use headers", redactEndpoint(raw))
	}
	e := Endpoint{TLS: !insecure, Path: u.EscapedPath()}
	switch {
	case u.Scheme == "https":
		e.TLS = true
	case u.Scheme == "http":
		e.TLS = false
	case u.Scheme != "scheme-less" || written:
		return Endpoint{}, fmt.Errorf("endpoint %s: scheme %q, want http, https or none", redactEndpoint(raw), u.Scheme)
	}
	host, port, err := splitHostPort(u.Host)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %s: %w", redactEndpoint(raw), err)
	}
	if port == "" {
		port = strconv.Itoa(schemePort(e.TLS))
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return Endpoint{}, fmt.Errorf("endpoint %s: bad port", redactEndpoint(raw))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Endpoint{}, fmt.Errorf("endpoint %s: a query or fragment is not allowed", redactEndpoint(raw))
	}
	e.Host, e.Port = host, n
	return e, nil
}

// splitHostPort is strict where url.Parse is lenient: "collector:4317:" is
// not "collector:4317". A host is a name, an IPv4 address, or an IPv6
// address in brackets, with a zone if it has one, which is a name too, so
// that HostPort writes it back plainly; the port is optional.
func splitHostPort(hostport string) (host, port string, err error) {
	host = hostport
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i+1:]
		if port == "" {
			return "", "", errors.New("empty port")
		}
	}
	if host == "" {
		return "", "", errors.New("no host")
	}
	if strings.HasPrefix(host, "[") {
		ip, ok := strings.CutSuffix(host[1:], "]")
		if a, err := netip.ParseAddr(ip); !ok || err != nil || !a.Is6() {
			return "", "", errors.New("not an IPv6 address in brackets")
		} else if a.Zone() != "" && !isName(a.Zone()) {
			return "", "", errors.New("not a zone name")
		}
		return ip, port, nil
	}
	if !isName(host) {
		return "", "", errors.New("not a host name or address (an IPv6 address needs brackets)")
	}
	return host, port, nil
}

// isName says whether s has only letters, digits, '-', '_' and '.'.
func isName(s string) bool {
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// redactEndpoint keeps the scheme, host and port of an endpoint for a
// message, and drops user info, path and query, which may hold secrets.
func redactEndpoint(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = "REDACTED@" + rest[i+1:]
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if scheme == "" || scheme == "scheme-less" {
		return fmt.Sprintf("%q", rest)
	}
	return fmt.Sprintf("%q", scheme+"://"+rest)
}
