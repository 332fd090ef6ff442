package gateways

// The tier's name: a DNS server of its own, on UDP, that answers one name
// with the gateway replicas' addresses, as a headless Service's name does.
// A process uses it through Go's own resolver, the one the transport looks
// names up with (net.DefaultResolver), its server address alone
// redirected: the machine's /etc/resolv.conf names another server, and
// nothing here touches the machine's /etc/hosts or resolv.conf.

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS answers its name with its addresses (A records, TTL 0), with no
// AAAA record, and any other name with NXDOMAIN.
type DNS struct {
	conn  net.PacketConn
	name  string // fully qualified, with the final dot
	mu    sync.Mutex
	addrs [][4]byte
}

// StartDNS serves name as addrs, IPv4 addresses, on a free UDP port of
// 127.0.0.1, until Close.
func StartDNS(name string, addrs []string) (*DNS, error) {
	d := &DNS{name: strings.TrimSuffix(name, ".") + "."}
	if err := d.SetAddrs(addrs); err != nil {
		return nil, err
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	d.conn = conn
	go d.serve()
	return d, nil
}

// SetAddrs makes addrs, IPv4 addresses, the name's answer from now on: a
// replica added to the tier, or taken out of it.
func (d *DNS) SetAddrs(addrs []string) error {
	var ips [][4]byte
	for _, a := range addrs {
		ip := net.ParseIP(a).To4()
		if ip == nil {
			return fmt.Errorf("%q is not an IPv4 address", a)
		}
		ips = append(ips, [4]byte(ip))
	}
	d.mu.Lock()
	d.addrs = ips
	d.mu.Unlock()
	return nil
}

// Addr is the server's "127.0.0.1:PORT".
func (d *DNS) Addr() string { return d.conn.LocalAddr().String() }

// Close stops the server.
func (d *DNS) Close() error { return d.conn.Close() }

func (d *DNS) serve() {
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

func (d *DNS) answer(query []byte) ([]byte, bool) {
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
	d.mu.Lock()
	addrs := d.addrs
	d.mu.Unlock()
	if known && q.Type == dnsmessage.TypeA {
		for _, a := range addrs {
			rr := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}
			if b.AResource(rr, dnsmessage.AResource{A: a}) != nil {
				return nil, false
			}
		}
	}
	resp, err := b.Finish()
	return resp, err == nil
}

// UseDNS points the process's Go resolver at the server at addr, and
// returns the function that puts the previous resolver back. Names in
// /etc/hosts, localhost among them, are still found there first.
func UseDNS(addr string) (restore func()) {
	prev := net.DefaultResolver
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
	return func() { net.DefaultResolver = prev }
}
