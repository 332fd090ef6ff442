package gateways

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDNSAnswersTheName: through Go's resolver, as the transport looks
// names up, the name gives every address, another name none.
func TestDNSAnswersTheName(t *testing.T) {
	d, err := StartDNS("gateway.tier.test", Hosts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	restore := UseDNS(d.Addr())
	prev := net.DefaultResolver
	ctx := context.Background()
	addrs, err := net.DefaultResolver.LookupHost(ctx, "gateway.tier.test")
	slices.Sort(addrs)
	if err != nil || !slices.Equal(addrs, Hosts) {
		t.Errorf("gateway.tier.test resolves to %v (%v), want %v", addrs, err, Hosts)
	}
	var dnsErr *net.DNSError
	if _, err := net.DefaultResolver.LookupHost(ctx, "other.tier.test"); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("other.tier.test: %v, want not found", err)
	}
	// A replica added: the next look-up finds it.
	more := append(slices.Clone(Hosts), "127.0.0.5")
	if err := d.SetAddrs(more); err != nil {
		t.Fatal(err)
	}
	addrs, err = net.DefaultResolver.LookupHost(ctx, "gateway.tier.test")
	slices.Sort(addrs)
	if err != nil || !slices.Equal(addrs, more) {
		t.Errorf("after SetAddrs gateway.tier.test resolves to %v (%v), want %v", addrs, err, more)
	}
	if err := d.SetAddrs([]string{"::1"}); err == nil {
		t.Error("SetAddrs took an IPv6 address")
	}
	restore()
	if net.DefaultResolver == prev {
		t.Error("UseDNS's restore left its resolver in place")
	}
}

// TestConfig: deploy/gateway.yaml less the elasticsearch exporter,
// everything else as shipped.
func TestConfig(t *testing.T) {
	path, err := Config(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Exporters map[string]any
		Service   struct {
			Pipelines map[string]struct{ Processors, Exporters []string }
		}
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Exporters["elasticsearch"]; ok || strings.Contains(string(b), "elasticsearch") {
		t.Errorf("the elasticsearch exporter is still there:\n%s", b)
	}
	logs := cfg.Service.Pipelines["logs"]
	if !slices.Equal(logs.Exporters, []string{"otlp_http/victorialogs"}) || !slices.Equal(logs.Processors, []string{"memory_limiter"}) {
		t.Errorf("logs pipeline %+v, want memory_limiter to otlp_http/victorialogs", logs)
	}
	if _, ok := cfg.Exporters["otlp_grpc/jaeger"]; !ok {
		t.Errorf("the traces' exporter is gone:\n%s", b)
	}
}

// TestFreePorts: four ports, each free on every replica's address.
func TestFreePorts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("127.0.0.2-4 are on the loopback interface of Linux only, unless added")
	}
	p, err := FreePorts(Hosts)
	if err != nil {
		t.Fatal(err)
	}
	ports := []int{p.GRPC, p.HTTP, p.Health, p.Metrics}
	for _, port := range ports {
		for _, h := range Hosts {
			l, err := net.Listen("tcp", At(h, port))
			if err != nil {
				t.Fatalf("%s: %v", At(h, port), err)
			}
			l.Close()
		}
	}
	slices.Sort(ports)
	if len(slices.Compact(ports)) != 4 {
		t.Errorf("ports %+v are not four", p)
	}
}

// TestUnansweredRecords: the exporter's batch bound for each queue
// consumer, read from the configuration, the Collector's 10 consumers
// when it sets none; the tier's own configuration has one. A bound that
// does not count records (a sizer of bytes, or none: requests by default)
// is refused.
func TestUnansweredRecords(t *testing.T) {
	path, err := Config(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := UnansweredRecords(path); err != nil || n <= 0 {
		t.Errorf("the tier's configuration: %d (%v)", n, err)
	}
	for _, c := range []struct {
		queue string
		want  int // 0: refused
	}{
		{"num_consumers: 3\n      batch:\n        sizer: items\n        max_size: 100", 300},
		{"batch:\n        sizer: items\n        max_size: 100", 1000},
		{"batch:\n        max_size: 100", 0},
		{"batch:\n        sizer: bytes\n        max_size: 100", 0},
	} {
		other := filepath.Join(t.TempDir(), "other.yaml")
		cfg := "exporters:\n  " + LogsExporter + ":\n    sending_queue:\n      " + c.queue + "\n"
		if err := os.WriteFile(other, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if n, err := UnansweredRecords(other); n != c.want || (err != nil) != (c.want == 0) {
			t.Errorf("%s: %d (%v), want %d", cfg, n, err, c.want)
		}
	}
}
