package gateways

// The replicas' addresses: one port for each of the gateway's listeners,
// the same on every replica's address, as behind a headless name.

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
)

// Hosts are the replicas' addresses. Linux routes all of 127.0.0.0/8 to
// the loopback interface; macOS has 127.0.0.1 alone until each is added
// (sudo ifconfig lo0 alias 127.0.0.2 up, and so on).
var Hosts = []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}

// Ports are a replica's listeners: OTLP/gRPC, OTLP/HTTP, the health check
// and the Collector's own metrics.
type Ports struct{ GRPC, HTTP, Health, Metrics int }

// FreePorts finds Ports free on every address of hosts at once.
func FreePorts(hosts []string) (Ports, error) {
	var p Ports
	var taken []int
	for _, port := range []*int{&p.GRPC, &p.HTTP, &p.Health, &p.Metrics} {
		// A port closed is free again: the next look may find it.
		for *port == 0 || slices.Contains(taken, *port) {
			var err error
			if *port, err = FreePort(hosts); err != nil {
				return Ports{}, err
			}
		}
		taken = append(taken, *port)
	}
	return p, nil
}

// FreePort is a port free on every address of hosts at once.
func FreePort(hosts []string) (int, error) {
	for range 100 {
		l, err := net.Listen("tcp", hosts[0]+":0")
		if err != nil {
			return 0, fmt.Errorf("cannot listen on %s (the tier needs 127.0.0.2-4 on the loopback interface: Linux has them; macOS needs `sudo ifconfig lo0 alias 127.0.0.2 up`, and .3, .4): %w", hosts[0], err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		free := true
		for _, h := range hosts[1:] {
			m, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(port)))
			if err != nil {
				free = false
				break
			}
			m.Close()
		}
		l.Close()
		if free {
			return port, nil
		}
	}
	return 0, errors.New("no port free on every replica's address")
}

// At is host:port.
func At(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// MetricsURL is the Prometheus text of the Collector's own metrics of the
// replica at host.
func (p Ports) MetricsURL(host string) string {
	return "http://" + At(host, p.Metrics) + "/metrics"
}
