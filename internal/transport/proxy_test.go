package transport

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/connectivity"
)

// connectProxy is an HTTP CONNECT proxy on loopback that alone knows where
// its hosts are: a name it maps resolves nowhere else.
type connectProxy struct {
	addr     string
	hosts    map[string]string // CONNECT host:port -> where it really is
	connects atomic.Int32
}

func startConnectProxy(t testing.TB, hosts map[string]string) *connectProxy {
	t.Helper()
	l := loopback(t)
	p := &connectProxy{addr: l.Addr().String(), hosts: hosts}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *connectProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	p.connects.Add(1)
	target, ok := p.hosts[req.Host]
	if !ok {
		target = req.Host
	}
	up, err := net.DialTimeout("tcp", target, time.Second)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	_, _ = io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
	go func() { _, _ = io.Copy(up, br); up.Close() }()
	_, _ = io.Copy(c, up)
}

// proxyChild names the child process TestRedialThroughProxy runs in.
const proxyChild = "ZAPLENS_TRANSPORT_PROXY_CHILD"

// Where gRPC dials through HTTPS_PROXY, a collector that comes back is
// reached through the proxy, as grpc-go reaches it: the reconnect probe
// does not dial the endpoint itself, whose name resolves only at the proxy.
// http.ProxyFromEnvironment, which grpc-go and the probe ask, reads the
// environment once per process, so the test runs in a child of its own.
func TestRedialThroughProxy(t *testing.T) {
	if os.Getenv(proxyChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRedialThroughProxy$", "-test.v")
		cmd.Env = append(os.Environ(), proxyChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestRedialThroughProxy") {
			t.Fatalf("the child failed: %v\n%s", err, out)
		}
		return
	}
	l := loopback(t)
	backend := l.Addr().String()
	l.Close() // the collector is down; it comes back on this address
	_, port, _ := net.SplitHostPort(backend)
	name := "collector.zaplens.invalid:" + port
	proxy := startConnectProxy(t, map[string]string{name: backend})
	for _, k := range []string{"NO_PROXY", "no_proxy", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		t.Setenv(k, "")
	}
	t.Setenv("HTTPS_PROXY", "http://"+proxy.addr)

	cfg := grpcConfig(name)
	cfg.Timeout = time.Second          // through a proxy, a collector that is down is a timeout, not a refusal
	cfg.RetryElapsed = 3 * time.Second // the first export only has to fail, not to wait out the default bound
	c := newClient(t, cfg)
	_, body := testRequest(t, 3)
	if r, _ := export(c, body, 3, Final); r.Err == nil {
		t.Fatal("an export to a collector that is down succeeded")
	}
	g := c.(*grpcClient)
	waitFor(t, "transient failure", func() bool { return g.conn.GetState() == connectivity.TransientFailure })

	col := &collector{}
	l2, err := net.Listen("tcp", backend)
	if err != nil {
		t.Fatal(err)
	}
	col.serve(t, l2)
	r, took := export(c, body, 3, Final)
	t.Logf("the export after the collector came back took %v", took)
	if r.Err != nil {
		t.Fatalf("the export after the collector came back failed in %v: %v", took, r.Err)
	}
	if col.calls.Load() != 1 || proxy.connects.Load() < 2 {
		t.Errorf("the collector had %d calls, the proxy %d CONNECTs; want 1 and at least 2", col.calls.Load(), proxy.connects.Load())
	}
}
