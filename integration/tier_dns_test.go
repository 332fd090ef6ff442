//go:build linux

package integration

// The tier's name: a DNS server of the test's own, on UDP, that answers
// one name with the gateway replicas' addresses, as a headless Service's
// name does. The services use it through Go's own resolver, the one the
// transport looks names up with (net.DefaultResolver), its server address
// alone redirected: the machine's /etc/resolv.conf names another server,
// and the test does not touch the machine's /etc/hosts or resolv.conf.

import (
	"context"
	"net"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// tierDNS answers name with addrs (A records, TTL 0), with no AAAA
// record, and any other name with NXDOMAIN.
type tierDNS struct {
	conn  net.PacketConn
	name  string // fully qualified, with the final dot
	addrs [][4]byte
}

func startTierDNS(t *testing.T, name string, addrs []string) *tierDNS {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &tierDNS{conn: conn, name: strings.TrimSuffix(name, ".") + "."}
	for _, a := range addrs {
		d.addrs = append(d.addrs, [4]byte(net.ParseIP(a).To4()))
	}
	t.Cleanup(func() { conn.Close() })
	go d.serve()
	return d
}

func (d *tierDNS) Addr() string { return d.conn.LocalAddr().String() }

func (d *tierDNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp, ok := d.answer(buf[:n]); ok {
			_, _ = d.conn.WriteTo(resp, from)
		}
	}
}

func (d *tierDNS) answer(query []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	known := strings.EqualFold(q.Name.String(), d.name)
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil, false
	}
	if known && q.Type == dnsmessage.TypeA {
		for _, a := range d.addrs {
			rr := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}
			if b.AResource(rr, dnsmessage.AResource{A: a}) != nil {
				return nil, false
			}
		}
	}
	resp, err := b.Finish()
	return resp, err == nil
}

// useTierDNS points the process's Go resolver at the server at addr.
func useTierDNS(addr string) {
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}
