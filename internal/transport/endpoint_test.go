package transport

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
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
		{"c", GRPC, true, Endpoint{Host: "c", Port: 4317}},
		{"c", HTTPProtobuf, false, Endpoint{Host: "c", Port: 4318, TLS: true}},
		{" http://c/a%2Fb ", HTTPProtobuf, false, Endpoint{Host: "c", Port: 4318, Path: "/a%2Fb", scheme: true}},
		{"https://[::1]:9/", GRPC, true, Endpoint{Host: "::1", Port: 9, TLS: true, Path: "/", scheme: true}},
		{"[fe80::1%25eth0]:9", GRPC, true, Endpoint{Host: "fe80::1%eth0", Port: 9}},
	} {
		got, err := ParseEndpoint(tc.raw, tc.protocol, tc.insecure)
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v, want %+v", tc.raw, got, err, tc.want)
		}
	}
}

func TestParseEndpointRefuses(t *testing.T) {
	for raw, want := range map[string]string{
		"scheme-less://c:1":    `scheme "scheme-less"`, // the marker for no scheme, written
		"https://u:s3cret@c:1": "credentials",
		"[fe80::1%eth0]:1":     "not a URL", // a zone is escaped, as in a URL
		"c:1:":                 "empty port",
		"c:0":                  "bad port",
		"c:1#s3cret":           "fragment",
		"[::1%25%5B]:1":        "zone",
	} {
		_, err := ParseEndpoint(raw, GRPC, false)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: error %v, want one with %q and no secret", raw, err, want)
		}
	}
}

// What an endpoint hands on, written by HostPort and a path, reads back as
// the same endpoint: the caller validates and the transport connects from
// one reading.
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

func TestConfigEndpointCredentials(t *testing.T) {
	if c, err := New(Config{Protocol: GRPC, Endpoint: "http://u:s3cret@c:1"}); err == nil || strings.Contains(err.Error(), "s3cret") {
		if c != nil {
			_ = c.Close(context.Background())
		}
		t.Errorf("grpc with credentials in the URL: error %v, want one without them", err)
	}
	// OTLP/HTTP sends them, as net/http does, and keeps them out of errors.
	col := &httpCollector{}
	cfg := httpConfig(strings.Replace(col.start(t).URL, "//", "//u:s3cret@", 1))
	cfg.Headers = nil
	c := newClient(t, cfg)
	_, body := testRequest(t, 1)
	r, _ := export(c, body, 1, Normal)
	if r.Cause != Unauthenticated || strings.Contains(r.Err.Error(), "s3cret") {
		t.Errorf("result %+v", r)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if u, p, ok := (&http.Request{Header: col.hdrs[0]}).BasicAuth(); u != "u" || p != "s3cret" || !ok {
		t.Errorf("basic auth %q %q %v", u, p, ok)
	}
}

// A zoned IPv6 address is reached, over HTTP as over gRPC, from the form
// HostPort writes.
func TestZonedEndpointDelivers(t *testing.T) {
	t.Parallel()
	zoned := func(t *testing.T, addr string) string {
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
		c := newClient(t, grpcConfig(zoned(t, l.Addr().String())))
		_, body := testRequest(t, 2)
		if r, _ := export(c, body, 2, Final); r.Cause != Delivered {
			t.Errorf("result %+v", r)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		col := &httpCollector{}
		srv := httptest.NewUnstartedServer(col)
		srv.Listener = listen(t)
		srv.Start()
		t.Cleanup(srv.Close)
		c := newClient(t, httpConfig("http://"+zoned(t, srv.Listener.Addr().String())))
		_, body := testRequest(t, 2)
		if r, _ := export(c, body, 2, Final); r.Cause != Delivered {
			t.Errorf("result %+v", r)
		}
	})
}
