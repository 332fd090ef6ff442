// Command profsplit reads a CPU profile and splits its samples by whose
// code they ran for: each sample goes to the innermost frame that belongs
// to one of the groups below (zaplens's packages, the OTel SDK and
// exporter, the OTel API, grpc-go, protobuf, the network system calls, zap
// or the benchmark itself), so the runtime's work (allocation, maps, locks)
// is charged to the package that asked for it. Samples with none of those
// frames (GC workers, the scheduler) are shown apart.
//
//	profsplit cpu.prof
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// groups, most specific prefix first.
var groups = []struct{ prefix, name string }{
	{"github.com/zaplens/zaplens/benchmarks", "benchmark loop (building the fields)"},
	{"github.com/zaplens/zaplens/internal/otlpwire", "zaplens: OTLP wire encoding (internal/otlpwire)"},
	{"github.com/zaplens/zaplens/internal/pipeline", "zaplens: queue and batches (internal/pipeline)"},
	{"github.com/zaplens/zaplens/internal/transport", "zaplens: transport (internal/transport)"},
	{"github.com/zaplens/zaplens", "zaplens: bridge (tee, fields, provider)"},
	{"go.opentelemetry.io/contrib/bridges/otelzap", "official bridge (otelzap)"},
	{"go.opentelemetry.io/otel/sdk", "OTel SDK (sdk/log: record, batch processor, export goroutine)"},
	{"go.opentelemetry.io/otel/exporters", "OTel exporter (otlploggrpc: transform to protobuf structs)"},
	{"go.opentelemetry.io/otel", "OTel API (log, attribute, trace)"},
	{"go.opentelemetry.io/proto", "OTLP generated types"},
	{"google.golang.org/protobuf", "protobuf (protowire appends, proto.Marshal)"},
	{"google.golang.org/grpc", "grpc-go (client, HTTP/2 transport)"},
	{"golang.org/x/net", "golang.org/x/net (HTTP/2 framing, HPACK)"},
	{"syscall", "system calls (network writes and reads)"},
	{"internal/poll", "system calls (network writes and reads)"},
	{"net/http", "net/http (HTTP client)"},
	{"net", "system calls (network writes and reads)"},
	{"go.uber.org/zap", "zap (logger, checked entry, JSON encoder)"},
}

const unowned = "runtime with no caller above (GC workers, scheduler)"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: profsplit cpu.prof")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p, err := profile.Parse(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	idx := len(p.SampleType) - 1 // cpu nanoseconds
	sums := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		total += v
		sums[owner(s)] += v
	}
	type row struct {
		name string
		v    int64
	}
	var rows []row
	for n, v := range sums {
		rows = append(rows, row{n, v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].v > rows[j].v })
	fmt.Println("| whose code | share of CPU samples |")
	fmt.Println("|---|---:|")
	for _, r := range rows {
		fmt.Printf("| %s | %.1f%% |\n", r.name, 100*float64(r.v)/float64(total))
	}
}

func owner(s *profile.Sample) string {
	for _, loc := range s.Location { // leaf first
		for _, ln := range loc.Line { // innermost inlined call first
			if ln.Function == nil {
				continue
			}
			name := ln.Function.Name
			for _, g := range groups {
				if strings.HasPrefix(name, g.prefix+".") || strings.HasPrefix(name, g.prefix+"/") {
					return g.name
				}
			}
		}
	}
	return unowned
}
