package transport

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestParseEndpointReads(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		protocol Protocol
		insecure bool
		want     Endpoint
	}{
		{"c:1", GRPC, false, Endpoint{Host: "c", Port: 1, TLS: true}},
		{"c", GRPC, true, Endpoint{Host: "c", Port: 80}},
		{"c", HTTPProtobuf, false, Endpoint{Host: "c", Port: 443, TLS: true}},
		{" http://c/a%2Fb ", HTTPProtobuf, false, Endpoint{Host: "c", Port: 80, Path: "/a%2Fb"}},
		{"https://[::1]:9/", GRPC, true, Endpoint{Host: "::1", Port: 9, TLS: true, Path: "/"}},
		{"[fe80::1%25eth0]:9", GRPC, true, Endpoint{Host: "fe80::1%eth0", Port: 9}},
		{"localhost:4317", GRPC, false, Endpoint{Host: "localhost", Port: 4317, TLS: true}},
		{"localhost:4317", GRPC, true, Endpoint{Host: "localhost", Port: 4317}},
		{"collector", GRPC, false, Endpoint{Host: "collector", Port: 443, TLS: true}},
		{"http://collector:5555", GRPC, false, Endpoint{Host: "collector", Port: 5555}},
		{"https://collector", GRPC, true, Endpoint{Host: "collector", Port: 443, TLS: true}},
		{"https://collector:4317/", GRPC, false, Endpoint{Host: "collector", Port: 4317, TLS: true, Path: "/"}},
		{"http://[::1]:4317", GRPC, false, Endpoint{Host: "::1", Port: 4317}},
		{"AZ-z_0.9:65535", GRPC, true, Endpoint{Host: "AZ-z_0.9", Port: 65535}}, // the ends of the ranges
	} {
		got, err := ParseEndpoint(tc.raw, tc.protocol, tc.insecure)
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v, want %+v", tc.raw, got, err, tc.want)
		}
	}
}

// An endpoint without a port is dialled on its scheme's, written or meant
// by TLS, as the official exporters dial it: hosted backends publish
// https://host/path, which is port 443. 4317 and 4318 are the ports of the
// default endpoint only, which names them.
func TestParseEndpointTakesTheSchemesPort(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		insecure bool
		port     int
	}{
		{"https://otlp.example.com/otlp", false, 443},
		{"https://otlp.example.com", true, 443},
		{"http://otlp.example.com/otlp", false, 80},
		{"otlp.example.com", false, 443},
		{"otlp.example.com", true, 80},
		{"https://[::1]/otlp", false, 443},
		{"http://localhost:4317", false, 4317}, // DefaultEndpoint
		{"http://localhost:4318", false, 4318}, // DefaultHTTPEndpoint
	} {
		for _, p := range []Protocol{GRPC, HTTPProtobuf} {
			e, err := ParseEndpoint(tc.raw, p, tc.insecure)
			if err != nil || e.Port != tc.port {
				t.Errorf("%q (%s, insecure %v): port %d, %v; want %d", tc.raw, p, tc.insecure, e.Port, err, tc.port)
			}
		}
	}
	// OTLP/HTTP posts with the Host header as written: no ":443".
	for raw, want := range map[string]string{
		"https://otlp.example.com/otlp": "https://otlp.example.com/otlp",
		"http://[::1]/v1/logs":          "http://[::1]/v1/logs",
		"https://c:80/v1/logs":          "https://c:80/v1/logs",
		"[fe80::1%25eth0]":              "http://[fe80::1%25eth0]", // endpointOf: insecure
	} {
		if got := endpointOf(raw, HTTPProtobuf).url(); got.String() != want {
			t.Errorf("%q posts to %q, want %q", raw, got, want)
		}
	}
}

func TestParseEndpointRefuses(t *testing.T) {
	for raw, want := range map[string]string{
		"scheme-less://c:1":                    `scheme "scheme-less"`, // the marker for no scheme, written
		"https://u:s3cret@c:1":                 "credentials",
		"[fe80::1%eth0]:1":                     "not a URL", // a zone is escaped, as in a URL
		"c:1:":                                 "empty port",
		"c:0":                                  "bad port",
		"c:1#s3cret":                           "fragment",
		"[::1%25%5B]:1":                        "zone",
		"http://u:s3cret@c:1":                  "credentials",
		"grpc://collector:4317":                `scheme "grpc"`,
		"http://:4317":                         "no host",
		"collector:99999":                      "bad port",
		"https://collector:4317/?token=s3cret": "query",
		"http://coll ector:4317":               "not a URL",
		"ftp://x/v1/logs":                      `scheme "ftp"`,
		"http://":                              "no host",
		"http://x:y:z/%zz":                     "not a URL",
	} {
		_, err := ParseEndpoint(raw, GRPC, false)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error %v, want one with %q and no secret", raw, err, want)
		}
	}
}

// An endpoint in an error message keeps its scheme, host and port, and
// loses its user info, path, query and fragment, which may hold secrets,
// wherever they start.
func TestRedactEndpoint(t *testing.T) {
	for raw, want := range map[string]string{
		"https://u:s3cret@c:1/p?k=s3cret": `"https://REDACTED@c:1"`,
		"https://@c:1":                    `"https://REDACTED@c:1"`,
		"https:///v1/logs?key=s3cret":     `"https://"`,
		"/v1/logs?key=s3cret":             `""`,
		"c:1#s3cret":                      `"c:1"`,
		"scheme-less://c:1":               `"c:1"`,
	} {
		if got := redactEndpoint(raw); got != want {
			t.Errorf("%q: %s, want %s", raw, got, want)
		}
	}
}

// An endpoint as it is written for gRPC's target and messages (HostPort)
// and for OTLP/HTTP (its URL) reads back as the same endpoint: what is
// dialled and what is shown are what was parsed.
func FuzzEndpointRoundTrip(f *testing.F) {
	for _, s := range []string{"c:1", "http://c", "https://[::1]:9/x", "[fe80::1%25eth0]:4317", "http://[fe80::1%25a%25b]/p%20q", "http://c/a%2Fb/", "http://c/a b", "c/%3F"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, raw string, insecure bool) {
		for _, p := range []Protocol{GRPC, HTTPProtobuf} {
			e, err := ParseEndpoint(raw, p, insecure)
			if err != nil {
				continue
			}
			back, err := ParseEndpoint(e.HostPort(), p, !e.TLS)
			if err != nil || back.Host != e.Host || back.Port != e.Port || back.TLS != e.TLS {
				t.Fatalf("%q (%s): %+v; its HostPort %q reads as %+v, %v", raw, p, e, e.HostPort(), back, err)
			}
			u := e.url().String()
			back, err = ParseEndpoint(u, p, false)
			if err != nil || back.Host != e.Host || back.Port != e.Port || back.TLS != e.TLS || back.Path != e.Path {
				t.Fatalf("%q (%s): %+v; its URL %q reads as %+v, %v", raw, p, e, u, back, err)
			}
		}
	})
}

// No input makes the parser panic, and no error quotes the user info of an
// endpoint.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"localhost:4317", "https://u:secret@h:1", "http://[::1]:4317", "h:99999", "grpc://x", "://", "@", "http://user:passw0rd@"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, insecure bool) {
		_, err := ParseEndpoint(s, GRPC, insecure)
		if err == nil {
			return
		}
		if at := strings.LastIndex(s, "@"); at >= 0 {
			user := s[:at]
			if i := strings.Index(user, "://"); i >= 0 {
				user = user[i+3:]
			}
			if len(user) >= 6 && strings.Contains(err.Error(), user) {
				t.Errorf("error %q quotes user info %q", err, user)
			}
		}
	})
}

// A zoned IPv6 address is reached, over HTTP as over gRPC, from the form
// HostPort writes.
func TestZonedEndpointDelivers(t *testing.T) {
	t.Parallel()
	zoned := func(addr string) string {
		_, port, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(port)
		return Endpoint{Host: "::1%lo", Port: n}.HostPort()
	}
	listen := func(t *testing.T) net.Listener {
		l, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Skipf("no IPv6 loopback: %v", err)
		}
		return l
	}
	t.Run("grpc", func(t *testing.T) {
		t.Parallel()
		l := listen(t)
		(&collector{}).serve(t, l)
		c := newClient(t, grpcConfig(zoned(l.Addr().String())))
		_, body := testRequest(t, 2)
		if r, _ := export(c, body, 2, Final); r.Cause != Delivered {
			t.Errorf("result %+v", r)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		srv := (&httpCollector{}).serve(t, listen(t))
		c := newClient(t, httpConfig("http://"+zoned(srv.Listener.Addr().String())))
		_, body := testRequest(t, 2)
		if r, _ := export(c, body, 2, Final); r.Cause != Delivered {
			t.Errorf("result %+v", r)
		}
	})
}
