//go:build linux

package integration

// The tier's name: a DNS server of the test's own (internal/gateways),
// that answers one name with the gateway replicas' addresses, as a
// headless Service's name does. The services use it through Go's own
// resolver, the one the transport looks names up with
// (net.DefaultResolver), its server address alone redirected: the
// machine's /etc/resolv.conf names another server, and the test does not
// touch the machine's /etc/hosts or resolv.conf.

import (
	"testing"

	"github.com/zaplens/zaplens/internal/gateways"
)

func startTierDNS(t *testing.T, name string, addrs []string) *gateways.DNS {
	t.Helper()
	d, err := gateways.StartDNS(name, addrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// useTierDNS points the process's Go resolver at the server at addr, for
// the rest of the child's life.
func useTierDNS(addr string) { gateways.UseDNS(addr) }
