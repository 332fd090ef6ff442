package transport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// spread is the RoundTripper of an OTLP/HTTP client whose endpoint is a
// host name, reached without a proxy: each request goes to the next of the
// addresses the name resolves to, round robin, over connections of that
// address's own (an http.Transport each). net/http keeps a connection
// alive and reuses it, so spreading connections would leave a process on
// one replica; spreading requests does not. A request is sent as it is:
// its URL, and so its Host header and TLS server name, stay the endpoint's;
// only the address dialled is the replica's.
type spread struct {
	base   *http.Transport // each replica's is a clone of it
	host   string
	port   string
	lookup lookupFunc
	every  time.Duration
	set    atomic.Pointer[replicaSet] // nil until the first look-up answers
	next   atomic.Uint32
	ready  chan struct{} // closed when set is first stored
	ctx    context.Context
	cancel context.CancelFunc // at close: ends the replicas' probes

	mu     sync.Mutex // guards watch and closed
	watch  *resolving // started by the first request
	closed bool
	once   sync.Once // closes ready
}

// replicaSet is what the last look-up found: the replicas, or, when no
// look-up has found any, why.
type replicaSet struct {
	replicas []*replica
	err      error
}

// newSpread is the spread for endpoint e on clones of base, or nil when
// there is nothing to spread over: e is an address, or a proxy reaches it
// (the proxy then resolves the name).
func newSpread(base *http.Transport, e Endpoint, cfg Config) *spread {
	if _, err := netip.ParseAddr(e.Host); err == nil {
		return nil
	}
	if base.Proxy != nil {
		if u, err := base.Proxy(&http.Request{URL: e.url()}); err != nil || u != nil {
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &spread{base: base, host: e.Host, port: strconv.Itoa(e.Port), lookup: cfg.lookup,
		every: cfg.reresolve, ready: make(chan struct{}), ctx: ctx, cancel: cancel}
}

// RoundTrip implements http.RoundTripper: the request goes to the next
// replica not known to be down, the next in turn after those the other
// requests took, so that the replicas up share evenly what a down one
// leaves; when its connection cannot be made, to the next, since nothing
// was sent. Only when every replica is down is each tried, in case one is
// back before its probe says so.
func (s *spread) RoundTrip(req *http.Request) (*http.Response, error) {
	set, err := s.current(req.Context())
	if err != nil {
		closeBody(req)
		return nil, err
	}
	rs := set.replicas
	n := uint32(len(rs))
	var (
		resp  *http.Response
		next  bool
		tried bool
	)
	for range n {
		r := rs[s.next.Add(1)%n]
		if r.down.Load() {
			continue
		}
		tried = true
		if resp, next, err = s.send(r, &req); !next {
			return resp, err
		}
	}
	if tried {
		return nil, err // every replica up refused: the last one's error
	}
	first := s.next.Load()
	for k := range n {
		if resp, next, err = s.send(rs[(first+k)%n], &req); !next {
			return resp, err
		}
	}
	return nil, err
}

// send sends *req to r. next says that the connection could not be made:
// nothing was sent, and *req is made again, its body from the start, for
// another replica.
func (s *spread) send(r *replica, req **http.Request) (resp *http.Response, next bool, err error) {
	resp, err = r.tr.RoundTrip(*req)
	if err == nil {
		return resp, false, nil
	}
	s.resolveNow() // a replica failed: maybe it has moved
	var de *dialError
	if !errors.As(err, &de) || (*req).Context().Err() != nil {
		return nil, false, err
	}
	again, rerr := rewound(*req)
	if rerr != nil {
		return nil, false, err
	}
	*req = again
	return nil, true, err
}

// current is the replicas to send to; the first call starts the look-ups
// and waits, within ctx, for the first answer.
func (s *spread) current(ctx context.Context) (*replicaSet, error) {
	if set := s.set.Load(); set != nil && len(set.replicas) > 0 {
		return set, nil
	}
	s.start()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	set := s.set.Load()
	if len(set.replicas) == 0 {
		s.resolveNow()
		return nil, set.err
	}
	return set, nil
}

// start starts the look-ups, once, unless the spread is closed.
func (s *spread) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watch == nil && !s.closed {
		s.watch = startResolving(s.host, s.lookup, s.every, s.update)
	}
}

func (s *spread) resolveNow() {
	s.mu.Lock()
	w := s.watch
	s.mu.Unlock()
	if w != nil {
		w.resolveNow()
	}
}

// update takes a look-up's outcome. A replica found again keeps its
// connections and its state; one no longer found has its idle connections
// closed (those in use end with their requests). A failed look-up keeps
// the replicas the last one found.
func (s *spread) update(addrs []string, err error) {
	defer s.once.Do(func() { close(s.ready) })
	old := s.set.Load()
	if err != nil {
		if old == nil || len(old.replicas) == 0 {
			s.set.Store(&replicaSet{err: err})
		}
		return
	}
	known := map[string]*replica{}
	if old != nil {
		for _, r := range old.replicas {
			known[r.addr] = r
		}
	}
	set := &replicaSet{replicas: make([]*replica, len(addrs))}
	for i, a := range addrs {
		addr := net.JoinHostPort(a, s.port)
		if r, ok := known[addr]; ok {
			set.replicas[i] = r
			delete(known, addr)
		} else {
			set.replicas[i] = s.newReplica(addr)
		}
	}
	s.set.Store(set)
	for _, r := range known {
		r.close()
	}
}

// close ends the look-ups and the probes and closes idle connections; a
// request still to come fails with ErrClosed.
func (s *spread) close() {
	s.mu.Lock()
	s.closed = true
	w := s.watch
	s.mu.Unlock()
	if w != nil {
		w.stop() // no update runs after it
	}
	s.cancel()
	if old := s.set.Swap(&replicaSet{err: ErrClosed}); old != nil {
		for _, r := range old.replicas {
			r.close()
		}
	}
	s.once.Do(func() { close(s.ready) })
}

// replica is one address of the endpoint's name.
type replica struct {
	addr   string // ip:port
	tr     *http.Transport
	dialer net.Dialer
	// down: a connection to it could not be made. Requests go to the other
	// replicas until a probe connects to it again.
	down   atomic.Bool
	ctx    context.Context // ends when it is removed or the spread closed
	cancel context.CancelFunc
}

func (s *spread) newReplica(addr string) *replica {
	r := &replica{addr: addr, dialer: net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}}
	r.ctx, r.cancel = context.WithCancel(s.ctx)
	r.tr = s.base.Clone()
	r.tr.Proxy = nil // newSpread saw that none applies
	r.tr.DialContext = clientFirstDial(r.dial)
	return r
}

// dial connects to the replica, whatever address net/http asks for (the
// endpoint's name). A failure marks it down, unless the request ended.
func (r *replica) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	conn, err := r.dialer.DialContext(ctx, network, r.addr)
	if err != nil {
		if ctx.Err() == nil {
			r.failed()
		}
		return nil, &dialError{err}
	}
	return conn, nil
}

// failed marks the replica down and, unless one runs already, starts a
// probe that marks it up when it accepts a connection again: a replica
// that restarts takes its share within the probe's backoff, as a gRPC
// subchannel reconnects within its own.
func (r *replica) failed() {
	if !r.down.Swap(true) {
		go r.probe()
	}
}

func (r *replica) probe() {
	for i := 0; ; i++ {
		t := time.NewTimer(exportBackoff.Delay(i))
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if conn, err := r.dialer.DialContext(r.ctx, "tcp", r.addr); err == nil {
			conn.Close()
			r.down.Store(false)
			return
		}
	}
}

func (r *replica) close() {
	r.cancel()
	r.tr.CloseIdleConnections()
}

// dialError is a connection to a replica that could not be made: the
// request was not sent, and may go to another replica. Its text and its
// chain are the dial's own.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// rewound is req again, its body from the start, for another replica:
// net/http closes a request's body when it fails.
func rewound(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}

// closeBody closes a request's body, as a RoundTripper must, even when it
// sends nothing.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
