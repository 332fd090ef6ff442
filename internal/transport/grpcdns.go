package transport

import (
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc/resolver"
)

// roundRobin is the gRPC service config that spreads calls over every
// address the resolver gives, one connection to each, where gRPC's default,
// pick_first, sends them all to the first one that connects.
const roundRobin = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// dnsResolver is the resolver of the "dns" scheme for one channel, given
// with grpc.WithResolvers: gRPC's own looks a name up again only when a
// connection is lost, so a replica added to a tier that loses none would
// never be used; this one also looks it up every interval (startResolving).
// It keeps the scheme's name so that gRPC treats the target as it treats
// any "dns" one: through an HTTPS_PROXY, the proxy resolves it, and this
// resolver is not built.
type dnsResolver struct {
	lookup lookupFunc    // nil: the system's resolver
	every  time.Duration // zero: resolveEvery
}

// Scheme implements resolver.Builder.
func (dnsResolver) Scheme() string { return "dns" }

// Build implements resolver.Builder. target is dns:///host:port, with a
// host name: grpcTarget gives an address to passthrough instead.
func (b dnsResolver) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	host, port, err := net.SplitHostPort(target.Endpoint())
	if err != nil {
		return nil, fmt.Errorf("dns target %q: %w", target.Endpoint(), err)
	}
	update := func(addrs []string, err error) {
		if err != nil {
			cc.ReportError(err)
			return
		}
		s := resolver.State{Addresses: make([]resolver.Address, len(addrs))}
		for i, a := range addrs {
			s.Addresses[i] = resolver.Address{Addr: net.JoinHostPort(a, port)}
		}
		_ = cc.UpdateState(s) // an error is the balancer's, told by its picker
	}
	return grpcResolving{startResolving(host, b.lookup, b.every, update)}, nil
}

// grpcResolving is a resolving as gRPC's resolver.Resolver.
type grpcResolving struct{ r *resolving }

// ResolveNow implements resolver.Resolver: gRPC asks when a connection is
// lost or a dial fails.
func (g grpcResolving) ResolveNow(resolver.ResolveNowOptions) { g.r.resolveNow() }

// Close implements resolver.Resolver.
func (g grpcResolving) Close() { g.r.stop() }
