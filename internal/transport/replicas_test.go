package transport

import (
	"cmp"
	"context"
	"crypto/tls"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testsupport/testcert"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
)

// A collector tier behind one name: both transports spread their requests
// over every replica the name resolves to, and lose no record when one
// drains, dies, comes back or is added.

// tierName is the name of the tests' tiers; only their lookup knows it.
const tierName = "gateway.zaplens.test"

// testReresolve is how often the tests' clients look the name up again.
const testReresolve = 200 * time.Millisecond

// testTier is what tierName resolves to, as a headless DNS name resolves
// to the replicas that are ready.
type testTier struct {
	name string // tierName when ""
	mu   sync.Mutex
	ips  []string
}

func (tt *testTier) lookup(_ context.Context, host string) ([]string, error) {
	if name := cmp.Or(tt.name, tierName); host != name {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return slices.Clone(tt.ips), nil
}

// resolveTo makes the name resolve to the replicas' addresses.
func (tt *testTier) resolveTo(reps ...*testReplica) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.ips = tt.ips[:0]
	for _, r := range reps {
		ip, _, _ := net.SplitHostPort(r.addr)
		tt.ips = append(tt.ips, ip)
	}
}

// tierListeners listens on 127.0.0.1 to 127.0.0.n, all on one port, as
// replicas of a tier serve on one port at addresses of their own: Linux
// routes the whole of 127.0.0.0/8 to the loopback interface.
func tierListeners(t testing.TB, n int) []net.Listener {
	t.Helper()
	for range 20 {
		first := loopback(t)
		_, port, _ := net.SplitHostPort(first.Addr().String())
		ls := []net.Listener{first}
		for i := 2; i <= n; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0."+strconv.Itoa(i), port))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		if len(ls) == n {
			return ls
		}
		for _, l := range ls {
			l.Close()
		}
	}
	t.Skipf("cannot listen on 127.0.0.1 to 127.0.0.%d on one port (only Linux routes all of 127/8 to loopback)", n)
	return nil
}

// testReplica is one collector of a tier, over its restarts.
type testReplica struct {
	addr   string // ip:port
	answer func(call int) reply
	mu     sync.Mutex
	lives  []served
}

// calls is the number of requests the replica has received, restarts
// included.
func (r *testReplica) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.lives {
		n += s.calls()
	}
	return n
}

// life is the replica as it runs now.
func (r *testReplica) life() served {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lives[len(r.lives)-1]
}

// restart serves the replica again on its address.
func (r *testReplica) restart(t *testing.T, tc transportCase) {
	t.Helper()
	var (
		l   net.Listener
		err error
	)
	for range 50 {
		if l, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("cannot listen on %s again: %v", r.addr, err)
	}
	s := tc.serve(t, l, r.answer)
	r.mu.Lock()
	r.lives = append(r.lives, s)
	r.mu.Unlock()
}

// startTier runs n collectors of tc at 127.0.0.1 to 127.0.0.n, tierName
// resolving to all of them, each answering as answer(i) says (every call
// accepted when answer is nil), and gives a configuration for the name.
func startTier(t *testing.T, tc transportCase, n int, answer func(i int) func(call int) reply) (*testTier, []*testReplica, Config) {
	t.Helper()
	tier := &testTier{}
	reps := make([]*testReplica, n)
	var cfg Config
	for i, l := range tierListeners(t, n) {
		a := answers(reply{})
		if answer != nil {
			if ai := answer(i); ai != nil {
				a = ai
			}
		}
		s := tc.serve(t, l, a)
		reps[i] = &testReplica{addr: l.Addr().String(), answer: a, lives: []served{s}}
		cfg = s.cfg
	}
	tier.resolveTo(reps...)
	cfg.Endpoint.Host = tierName
	cfg.lookup = tier.lookup
	cfg.reresolve = testReresolve
	return tier, reps, cfg
}

// callsOf is each replica's calls.
func callsOf(reps []*testReplica) []int {
	n := make([]int, len(reps))
	for i, r := range reps {
		n[i] = r.calls()
	}
	return n
}

// checkShares fails unless each replica's share of the calls since
// before is within [lo, hi].
func checkShares(t *testing.T, reps []*testReplica, before []int, lo, hi float64) {
	t.Helper()
	now := callsOf(reps)
	total := 0
	for i := range now {
		now[i] -= before[i]
		total += now[i]
	}
	if total == 0 {
		t.Fatal("no calls")
	}
	shares := make([]float64, len(now))
	for i, n := range now {
		shares[i] = float64(n) / float64(total)
	}
	t.Logf("calls of each replica: %v of %d (shares %.2f)", now, total, shares)
	for i, s := range shares {
		if s < lo || s > hi {
			t.Errorf("replica %d took %.0f%% of the calls, want %.0f%% to %.0f%%", i+1, 100*s, 100*lo, 100*hi)
		}
	}
}

// exportAll makes n exports one after another, and fails the test for
// each that was not delivered. It returns how many took more than one
// attempt.
func exportAll(t *testing.T, c Client, n int, mode Mode) (retried int) {
	t.Helper()
	_, body := testRequest(t, 2)
	for range n {
		r := c.Export(context.Background(), body, 2, mode)
		if r.Err != nil || r.Rejected != 0 {
			t.Errorf("an export failed: %+v", r)
		}
		if r.Attempts > 1 {
			retried++
		}
	}
	return retried
}

// exportUntil exports until cond holds, and fails the test after limit.
// It returns how long it took.
func exportUntil(t *testing.T, c Client, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("no %s after %v", what, limit)
		}
		exportAll(t, c, 1, Normal)
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// (a) Three replicas behind one name take a third of the calls each,
// where gRPC's default, pick_first, and net/http's dialer, which tries
// the addresses in order, would send every call to one.
func TestSpreadOverReplicas(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		_, reps, cfg := startTier(t, tc, 3, nil)
		c := newClient(t, cfg)
		exportAll(t, c, 300, Normal)
		checkShares(t, reps, make([]int, 3), 0.25, 0.42)
	})
}

// (b) A replica that drains mid-stream, its address still in the name as
// in a rolling restart, takes no call after it has drained; the others
// take its share, and no export fails.
func TestDrainingReplicaHandsOverItsShare(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		_, reps, cfg := startTier(t, tc, 3, nil)
		c := newClient(t, cfg)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { exportAll(t, c, 100, Normal) })
		}
		waitFor(t, "100 calls", func() bool {
			n := callsOf(reps)
			return n[0]+n[1]+n[2] >= 100
		})
		reps[0].life().drain()
		drained := callsOf(reps)
		wg.Wait()
		after := callsOf(reps)
		if after[0] != drained[0] {
			t.Errorf("the drained replica took %d calls after it drained", after[0]-drained[0])
		}
		others := after[1] - drained[1] + after[2] - drained[2]
		t.Logf("calls before the drain ended: %v; after it: %d to the others", drained, others)
		checkShares(t, reps[1:], drained[1:], 0.4, 0.6)
	})
}

// (c) A replica that dies with a request in flight, the last of the
// name's addresses (which pick_first would never use): that export is
// retried on another replica and delivered, counted once; every export
// after it, Final ones too, goes to the replicas still up at its first
// attempt, though the dead one is still in the name.
func TestReplicaKilledMidRequestIsRetriedOnAnother(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		entered := make(chan struct{}, 1)
		hangs := func(int) reply {
			select {
			case entered <- struct{}{}:
			default:
			}
			return reply{kind: hang}
		}
		_, reps, cfg := startTier(t, tc, 3, func(i int) func(int) reply {
			if i == 2 {
				return hangs
			}
			return nil
		})
		victim := reps[2]
		c := newClient(t, cfg)
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-entered:
				victim.life().kill()
			case <-done:
			}
		}()
		retried := exportAll(t, c, 30, Normal)
		live := func() int { n := callsOf(reps); return n[0] + n[1] }
		if n := victim.calls(); n != 1 {
			t.Fatalf("the replica that died took %d calls, want the one it died with", n)
		}
		if got := live(); got != 30 || retried != 1 {
			t.Errorf("the replicas up took %d calls for 30 exports, %d of them retried; want 30, the one in flight", got, retried)
		}
		retried = exportAll(t, c, 30, Final)
		if got := live(); got != 60 || victim.calls() != 1 || retried != 0 {
			t.Errorf("the replicas up took %d calls for 60 exports, %d of the last 30 retried, the dead one %d calls", got, retried, victim.calls())
		}
	})
}

// (d) A replica added to the name takes its share within one
// re-resolution; one that dies and comes back on its address takes it
// again within its reconnection's backoff; one removed from the name takes
// no call after one re-resolution.
func TestReplicaTakesItsShareWithinOneReResolution(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		tier, reps, cfg := startTier(t, tc, 3, nil)
		tier.resolveTo(reps[0], reps[1])
		c := newClient(t, cfg)
		exportAll(t, c, 30, Normal)
		if n := reps[2].calls(); n != 0 {
			t.Fatalf("a replica not in the name took %d calls", n)
		}

		tier.resolveTo(reps...)
		took := exportUntil(t, c, "call to the added replica", 5*time.Second, func() bool { return reps[2].calls() > 0 })
		t.Logf("the added replica took its first call %v after it was added to the name", took.Round(time.Millisecond))
		within(t, "the added replica's first call", took, testReresolve+time.Second)
		before := callsOf(reps)
		exportAll(t, c, 300, Normal)
		checkShares(t, reps, before, 0.25, 0.42)

		reps[2].life().kill()
		exportAll(t, c, 30, Normal)
		reps[2].restart(t, tc)
		came := reps[2].calls()
		took = exportUntil(t, c, "call to the restarted replica", 10*time.Second, func() bool { return reps[2].calls() > came })
		t.Logf("the restarted replica took its first call %v after it came back", took.Round(time.Millisecond))
		within(t, "the restarted replica's first call", took, backoffMax+time.Second)

		tier.resolveTo(reps[0], reps[1])
		time.Sleep(3 * testReresolve)
		removed := reps[2].calls()
		exportAll(t, c, 30, Normal)
		if n := reps[2].calls() - removed; n != 0 {
			t.Errorf("a replica removed from the name took %d calls", n)
		}
	})
}

// Every replica sees the endpoint's name, not its own address: as the TLS
// server name, which the certificate, made for "localhost", must match,
// and in each request (the Host header, gRPC's :authority). A replica that
// drains (a GOAWAY, over HTTP/2 for OTLP/HTTP too) hands over its share,
// no export after it needing a second attempt.
func TestSpreadKeepsTheEndpointName(t *testing.T) {
	t.Parallel()
	files, err := testcert.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Protocol{GRPC, HTTPProtobuf} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			var names nameLog
			serverTLS := &tls.Config{Certificates: []tls.Certificate{files.Pair}, MinVersion: tls.VersionTLS12,
				GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
					names.add("server name "+h.ServerName, 0)
					return nil, nil
				}}
			tier := &testTier{name: "localhost"}
			var reps []*testReplica
			var cfg Config
			for _, l := range tierListeners(t, 3) {
				s := serveTLS(t, p, l, serverTLS, &names)
				reps = append(reps, &testReplica{addr: l.Addr().String(), lives: []served{s}})
				cfg = s.cfg
			}
			tier.resolveTo(reps...)
			cfg.Endpoint.Host, cfg.Endpoint.TLS = "localhost", true
			cfg.TLS = &tls.Config{RootCAs: files.Pool}
			cfg.lookup = tier.lookup
			c := newClient(t, cfg)

			// round_robin sends to the replicas ready: until each has
			// done its handshake, the first ones take the calls.
			exportUntil(t, c, "call to each replica", 5*time.Second, func() bool { return !slices.Contains(callsOf(reps), 0) })
			before := callsOf(reps)
			exportAll(t, c, 150, Normal)
			checkShares(t, reps, before, 0.25, 0.42)
			reps[0].life().drain()
			drained := callsOf(reps)
			if retried := exportAll(t, c, 150, Normal); retried != 0 {
				t.Errorf("%d exports after the drain took more than one attempt", retried)
			}
			if n := reps[0].calls() - drained[0]; n != 0 {
				t.Errorf("the drained replica took %d calls after it drained", n)
			}
			host := net.JoinHostPort("localhost", strconv.Itoa(cfg.Endpoint.Port))
			want := map[string]bool{"server name localhost": true, "host " + host: true}
			if p == HTTPProtobuf {
				want["HTTP/2"] = true
			}
			for name := range names.seen() {
				if !want[name] {
					t.Errorf("a replica saw %q; want only %v", name, want)
				}
				delete(want, name)
			}
			if len(want) > 0 {
				t.Errorf("no replica saw %v", want)
			}
		})
	}
}

// nameLog is what the replicas of TestSpreadKeepsTheEndpointName saw.
type nameLog struct {
	mu    sync.Mutex
	names map[string]int
}

// add notes a name, and for HTTP the protocol of the request.
func (l *nameLog) add(name string, protoMajor int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.names == nil {
		l.names = map[string]int{}
	}
	l.names[name]++
	if protoMajor != 0 {
		l.names["HTTP/"+strconv.Itoa(protoMajor)]++
	}
}

func (l *nameLog) seen() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.names)
}

// serveTLS runs a collector of protocol p on l with TLS, HTTP/2 for
// OTLP/HTTP too, noting in names the host each request names.
func serveTLS(t *testing.T, p Protocol, l net.Listener, cfg *tls.Config, names *nameLog) served {
	if p == GRPC {
		col := &collector{handle: func(ctx context.Context, _ int) (*collogspb.ExportLogsServiceResponse, error) {
			md, _ := metadata.FromIncomingContext(ctx)
			names.add("host "+strings.Join(md.Get(":authority"), ","), 0)
			return &collogspb.ExportLogsServiceResponse{}, nil
		}}
		srv := col.serve(t, l, grpc.Creds(credentials.NewTLS(cfg)))
		return served{cfg: grpcConfig(l.Addr().String()), calls: func() int { return int(col.calls.Load()) }, drain: srv.GracefulStop, kill: srv.Stop}
	}
	col := &httpCollector{}
	srv := &httptest.Server{Listener: l, TLS: cfg, EnableHTTP2: true, Config: &http.Server{
		ErrorLog: log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			names.add("host "+r.Host, r.ProtoMajor)
			col.ServeHTTP(w, r)
		}),
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return served{cfg: httpConfig(srv.URL), calls: func() int { return int(col.calls.Load()) },
		drain: func() { _ = srv.Config.Shutdown(context.Background()) }, kill: srv.CloseClientConnections}
}

// A gateway that closes each connection after a while (the Collector's
// max_connection_age, a GOAWAY) keeps the spread, and fails no export.
func TestGRPCMaxConnectionAgeKeepsTheSpread(t *testing.T) {
	t.Parallel()
	tier := &testTier{}
	var (
		reps     []*testReplica
		accepted atomic.Int32
	)
	age := grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionAge: 100 * time.Millisecond, MaxConnectionAgeGrace: time.Second})
	for _, l := range tierListeners(t, 3) {
		col := &collector{}
		col.serve(t, &countingListener{Listener: l, accepted: &accepted}, age)
		reps = append(reps, &testReplica{addr: l.Addr().String(), lives: []served{{calls: func() int { return int(col.calls.Load()) }}}})
	}
	tier.resolveTo(reps...)
	cfg := grpcConfig(net.JoinHostPort(tierName, strconv.Itoa(endpointOf(reps[0].addr, GRPC).Port)))
	cfg.lookup, cfg.reresolve = tier.lookup, testReresolve
	c := newClient(t, cfg)
	start := time.Now()
	for range 300 {
		exportAll(t, c, 1, Normal)
		time.Sleep(3 * time.Millisecond)
	}
	checkShares(t, reps, make([]int, 3), 0.25, 0.42)
	t.Logf("%d connections over %v", accepted.Load(), time.Since(start).Round(time.Millisecond))
	if n := accepted.Load(); n < 6 {
		t.Errorf("%d connections: the gateway did not close them (want each replica's closed at least once)", n)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted *atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// The production path: a name the system's resolver resolves, every
// address of it served. "localhost" resolves to 127.0.0.1 and ::1 where
// /etc/hosts says both; where it says one, this test proves only that the
// system's resolver is the one used.
func TestSpreadWithTheSystemResolver(t *testing.T) {
	addrs, err := net.DefaultResolver.LookupHost(context.Background(), "localhost")
	if err != nil || len(addrs) == 0 {
		t.Skipf("localhost does not resolve: %v", err)
	}
	eachTransport(t, func(t *testing.T, tc transportCase) {
		var (
			reps []*testReplica
			cfg  Config
		)
		port := "0"
		for _, a := range addrs {
			l, err := net.Listen("tcp", net.JoinHostPort(a, port))
			if err != nil {
				t.Skipf("cannot listen on %s: %v", a, err)
			}
			_, port, _ = net.SplitHostPort(l.Addr().String())
			s := tc.serve(t, l, answers(reply{}))
			reps = append(reps, &testReplica{addr: l.Addr().String(), lives: []served{s}})
			cfg = s.cfg
		}
		cfg.Endpoint.Host = "localhost" // cfg.lookup is nil: the system's resolver
		c := newClient(t, cfg)
		exportAll(t, c, 30*len(reps), Normal)
		if len(reps) == 1 {
			t.Logf("localhost resolves to %v only here: nothing to spread", addrs)
		}
		lo := 0.5 / float64(len(reps))
		checkShares(t, reps, make([]int, len(reps)), lo, 1-lo*float64(len(reps)-1))
	})
}

// When every replica is down, an export is refused, as one to a single
// collector that is down is: at once in Final mode, the error a dial's.
func TestEveryReplicaDownIsRefused(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		_, reps, cfg := startTier(t, tc, 3, nil)
		cfg.RetryElapsed = 3 * time.Second // a failure of this test takes no longer
		c := newClient(t, cfg)
		exportAll(t, c, 6, Normal)
		for _, r := range reps {
			r.life().kill()
		}
		_, body := testRequest(t, 2)
		for i := range 3 {
			r, took := export(c, body, 2, Final)
			within(t, "export", took, time.Second)
			// The first meets the connection that broke, tried again at
			// once, as with one collector.
			if r.Cause != Refused || r.Attempts > 1 && i > 0 || !strings.Contains(r.Err.Error(), "connection refused") {
				t.Fatalf("result %+v, want refused, after one attempt but for the first", r)
			}
		}
	})
}

// A name that does not resolve is a refused connection, told at once in
// Final mode.
func TestUnknownNameIsRefused(t *testing.T) {
	eachTransport(t, func(t *testing.T, tc transportCase) {
		cfg, _ := tc.refused(t)
		cfg.Endpoint.Host = "collector.invalid"
		cfg.lookup = (&testTier{}).lookup
		c := newClient(t, cfg)
		_, body := testRequest(t, 2)
		r, took := export(c, body, 2, Final)
		within(t, "export", took, time.Second)
		if r.Cause != Refused || r.Attempts != 1 {
			t.Fatalf("result %+v, want refused after one attempt", r)
		}
	})
}

// A failed look-up is told, and tried again soon, not an interval later;
// addresses come sorted, each once.
func TestResolvingRetriesAFailedLookup(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	lookup := func(context.Context, string) ([]string, error) {
		if calls.Add(1) == 1 {
			return nil, &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}
		}
		return []string{"10.0.0.2", "10.0.0.1", "10.0.0.2"}, nil
	}
	got := make(chan []string, 1)
	var errs atomic.Int32
	r := startResolving("x", lookup, time.Hour, func(addrs []string, err error) {
		if err != nil {
			errs.Add(1)
			return
		}
		select {
		case got <- addrs:
		default:
		}
	})
	defer r.stop()
	select {
	case addrs := <-got:
		if !slices.Equal(addrs, []string{"10.0.0.1", "10.0.0.2"}) || errs.Load() != 1 {
			t.Errorf("addresses %v after %d errors, want 10.0.0.1 and 10.0.0.2 after 1", addrs, errs.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no second look-up within 5s of a failed one")
	}
}
