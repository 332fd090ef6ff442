package transport

import (
	"context"
	"net"
	"slices"
	"time"
)

// A collector tier is often one name for several replicas (a headless
// Kubernetes Service, a DNS round robin). Both transports spread their
// requests over every address the endpoint's name resolves to, and look
// the name up again while they run, so that a replica added, restarted
// elsewhere or removed is seen without a new connection to the name.
const (
	// resolveEvery is how often the name is looked up again. The
	// Collector's loadbalancing exporter looks its name up every 5 s;
	// gRPC's own resolver only when a connection is lost, no more often
	// than every 30 s, so that a replica added to a tier that loses no
	// connection is never seen.
	resolveEvery = 10 * time.Second
	// resolveGap is the least time between a look-up and one asked for
	// early, when a connection was lost or refused: a replica that
	// failed is looked for elsewhere at once, but a tier that keeps
	// failing does not turn each failure into a DNS query.
	resolveGap = 2 * time.Second
	// lookupTimeout bounds one look-up.
	lookupTimeout = 5 * time.Second
	// connectTimeout bounds one connection's set-up to one replica, so
	// that a replica that vanished (no answer at all) costs that long,
	// not the attempt's whole timeout, before another is tried. gRPC
	// gives its dials as long at the least (grpcConnectParams).
	connectTimeout = 5 * time.Second
)

// lookupFunc resolves a host name to its addresses, as
// net.Resolver.LookupHost does.
type lookupFunc func(ctx context.Context, host string) ([]string, error)

// resolving looks a host name up in a goroutine of its own, every
// interval and when asked, and tells each outcome to its update function,
// until stop.
type resolving struct {
	host   string
	lookup lookupFunc
	every  time.Duration
	update func(addrs []string, err error) // the addresses sorted, or why there are none
	now    chan struct{}                   // a look-up is asked for early
	cancel context.CancelFunc
	done   chan struct{}
}

// startResolving starts looking host up with lookup, the system's resolver
// when it is nil, every interval (resolveEvery when zero).
func startResolving(host string, lookup lookupFunc, every time.Duration, update func([]string, error)) *resolving {
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	if every <= 0 {
		every = resolveEvery
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &resolving{host: host, lookup: lookup, every: every, update: update,
		now: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go r.run(ctx)
	return r
}

// resolveNow asks for a look-up now, or resolveGap after the last one if
// that is later. It never blocks.
func (r *resolving) resolveNow() {
	select {
	case r.now <- struct{}{}:
	default:
	}
}

// stop ends the look-ups and waits for the goroutine.
func (r *resolving) stop() {
	r.cancel()
	<-r.done
}

func (r *resolving) run(ctx context.Context) {
	defer close(r.done)
	for failures := 0; ; {
		addrs, err := r.resolve(ctx)
		if ctx.Err() != nil {
			return
		}
		r.update(addrs, err)
		wait := r.every
		if err != nil { // retried as an export is, not an interval later
			wait = exportBackoff.Delay(failures)
			failures++
		} else {
			failures = 0
		}
		if !r.wait(ctx, wait, min(resolveGap, wait)) {
			return
		}
	}
}

// resolve looks the name up once: its addresses, sorted, or an error.
func (r *resolving) resolve(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	addrs, err := r.lookup(ctx, r.host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no addresses", Name: r.host, IsNotFound: true}
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(addrs)
	return slices.Compact(addrs), nil
}

// wait sleeps until the next look-up: d from now, or gap from now if one
// is asked for meanwhile. It is false when ctx ends first.
func (r *resolving) wait(ctx context.Context, d, gap time.Duration) bool {
	earliest := time.Now().Add(gap)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	case <-r.now:
	}
	t.Reset(time.Until(earliest))
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// dialAny connects to hostport, to the first of its host's addresses that
// accepts, as net.Dialer does with the system's resolver, which it uses
// when lookup is nil.
func dialAny(ctx context.Context, lookup lookupFunc, hostport string) (net.Conn, error) {
	var d net.Dialer
	if lookup == nil {
		return d.DialContext(ctx, "tcp", hostport)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		var conn net.Conn
		if conn, err = d.DialContext(ctx, "tcp", net.JoinHostPort(a, port)); err == nil {
			return conn, nil
		}
	}
	return nil, err
}
