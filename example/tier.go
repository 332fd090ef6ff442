package main

// The -tier mode: a collector tier on this machine, every part a real
// process but the services. Three gateway replicas of the Collector built
// from deploy/'s manifest (internal/otelcol) run deploy/gateway.yaml, its
// persistent queue on, on 127.0.0.2, .3 and .4 (internal/tier); a DNS
// server of the example's own gives them one name; a VictoriaLogs cluster
// (two storage nodes, a vlinsert, a vlselect) stores what they export. A
// few services, goroutines here, each with its own zaplens pipeline, log
// bursts of lines to that name, each burst a trace, and zaplens spreads
// their requests over the three replicas. The example then prints each
// replica's share, vmui's link on vlselect and the LogsQL query of a
// trace, and keeps the tier up until Ctrl-C.
//
// The Collector and VictoriaLogs are built from Go modules into the user
// cache directory on first use (minutes for the Collector); later runs
// start at once.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/gateways"
	"github.com/zaplens/zaplens/internal/otelcol"
	"github.com/zaplens/zaplens/internal/victorialogs"
	"github.com/zaplens/zaplens/otlplog"
)

// The demo's tier and fleet.
const (
	tierName     = "gateway.zaplens-demo.test" // .test: a name no real DNS answers
	tierServices = 4                           // half over OTLP/gRPC, half over OTLP/HTTP
	tierBursts   = 40                          // per service, each a trace
	tierBurst    = 25                          // lines per burst
	tierPause    = 20 * time.Millisecond       // between bursts
	// tierBatch is small so that each service makes many requests, and
	// the replicas' shares show the spreading.
	tierBatch = 50
)

// tierRun is the running tier.
type tierRun struct {
	vl       *victorialogs.Cluster
	ports    gateways.Ports
	gateways []*otelcol.Process
	dns      *gateways.DNS
}

// runTier starts the tier, runs the services, prints what they did and
// where to see it, and then calls hold, which returns when the tier may
// stop. progress hears about the builds, which take minutes the first
// time.
func runTier(ctx context.Context, stdout, progress io.Writer, hold func(context.Context, *tierRun) error) error {
	otelBin, err := otelcol.Binary(ctx, progress)
	if err != nil {
		return err
	}
	vlBin, err := victorialogs.Binary(ctx, progress)
	if err != nil {
		return err
	}
	// Fresh data and queues each run: the counts and links show this
	// run's lines only.
	dir, err := os.MkdirTemp("", "zaplens-example-tier-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	tr := &tierRun{}
	defer tr.stop()
	fmt.Fprintln(progress, "starting the tier: a VictoriaLogs cluster, three gateway replicas")
	if tr.vl, err = victorialogs.StartCluster(ctx, vlBin, dir, 2); err != nil {
		return err
	}
	if err := tr.startGateways(ctx, otelBin, dir); err != nil {
		return err
	}
	if tr.dns, err = gateways.StartDNS(tierName, gateways.Hosts); err != nil {
		return err
	}
	// The services are this process's goroutines: they, and nothing else
	// here, look names up; the gateway's name is the DNS server's.
	defer gateways.UseDNS(tr.dns.Addr())()

	traces, logged, err := tr.runServices(ctx)
	if err != nil {
		return err
	}
	stored, err := tr.waitStored(ctx, logged)
	if err != nil {
		return err
	}
	if err := tr.print(ctx, stdout, traces, logged, stored); err != nil {
		return err
	}
	return hold(ctx, tr)
}

// stop stops every process started, the gateways first.
func (tr *tierRun) stop() {
	var wg sync.WaitGroup
	for _, p := range tr.gateways {
		wg.Go(p.Stop)
	}
	wg.Wait()
	if tr.dns != nil {
		tr.dns.Close()
	}
	if tr.vl != nil {
		tr.vl.Stop()
	}
}

// startGateways starts the three replicas, on one set of ports free on
// every address.
func (tr *tierRun) startGateways(ctx context.Context, bin, dir string) error {
	var err error
	if tr.ports, err = gateways.FreePorts(gateways.Hosts); err != nil {
		return err
	}
	gateway, err := gateways.Config(dir)
	if err != nil {
		return err
	}
	for _, h := range gateways.Hosts {
		p, err := gateways.Start(ctx, bin, dir, h, tr.ports, gateway, tr.vl.Insert.Addr(), nil)
		if err != nil {
			return err
		}
		tr.gateways = append(tr.gateways, p)
	}
	return nil
}

// tierTrace is one burst: its trace and where it came from.
type tierTrace struct {
	id      trace.TraceID
	service string
	burst   int
}

// runServices runs the services to the end and returns the first burst's
// trace of each and the lines they logged.
func (tr *tierRun) runServices(ctx context.Context) ([]tierTrace, int, error) {
	traces := make([]tierTrace, tierServices)
	errs := make([]error, tierServices)
	var wg sync.WaitGroup
	for i := range tierServices {
		wg.Go(func() { traces[i], errs[i] = tr.runService(ctx, i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	return traces, tierServices * tierBursts * tierBurst, nil
}

// runService is one service: its own pipeline to the tier's name, its own
// spans, bursts of lines in them.
func (tr *tierRun) runService(ctx context.Context, i int) (tierTrace, error) {
	name := fmt.Sprintf("tier-demo-%d", i)
	proto, port := "grpc", tr.ports.GRPC
	if i%2 == 1 {
		proto, port = "http/protobuf", tr.ports.HTTP
	}
	lp, err := otlplog.NewLoggerProvider(ctx,
		otlplog.WithEndpoint(fmt.Sprintf("http://%s:%d", tierName, port)),
		otlplog.WithProtocol(proto),
		otlplog.WithServiceName(name),
		otlplog.WithBatchSize(tierBatch))
	if err != nil {
		return tierTrace{}, err
	}
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(lp))).Named("api")
	// The spans are made for their ids, which every line carries; they
	// are exported nowhere.
	tracer := sdktrace.NewTracerProvider().Tracer("api")
	var first tierTrace
	for burst := range tierBursts {
		sctx, span := tracer.Start(ctx, "request")
		if burst == 0 {
			first = tierTrace{id: span.SpanContext().TraceID(), service: name, burst: burst}
		}
		for line := range tierBurst {
			logger.Info("handling request", zaplens.Context(sctx), zap.Int("request", burst), zap.Int("line", line), zap.String("proto", proto))
		}
		span.End()
		time.Sleep(tierPause)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := lp.Shutdown(sctx); err != nil {
		return first, fmt.Errorf("%s: %w", name, err)
	}
	if st := lp.Stats(); st.Exported != tierBursts*tierBurst {
		return first, fmt.Errorf("%s: %s", name, st)
	}
	return first, nil
}

// waitStored waits until vlselect counts the lines logged, at most a
// minute: the gateways batch in their queues for up to a second, and
// VictoriaLogs makes rows searchable within a second.
func (tr *tierRun) waitStored(ctx context.Context, logged int) (int, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		n, err := tr.vl.Count(ctx, "*")
		if err != nil || n >= logged || time.Now().After(deadline) {
			return n, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// print writes what the tier did and where to see it.
func (tr *tierRun) print(ctx context.Context, w io.Writer, traces []tierTrace, logged, stored int) error {
	fmt.Fprintf(w, "the tier on this machine:\n  gateway replicas  %s, the Collector of deploy/builder-config.yaml running deploy/gateway.yaml, OTLP/gRPC on port %d, OTLP/HTTP on %d\n",
		strings.Join(gateways.Hosts, ", "), tr.ports.GRPC, tr.ports.HTTP)
	fmt.Fprintf(w, "  their one name    %s, answered by the example's DNS server on %s\n", tierName, tr.dns.Addr())
	fmt.Fprintf(w, "  VictoriaLogs      storage nodes %s and %s, vlinsert %s, vlselect %s\n",
		tr.vl.Storage[0].Addr(), tr.vl.Storage[1].Addr(), tr.vl.Insert.Addr(), tr.vl.Select.Addr())
	fmt.Fprintf(w, "\n%d services (half over OTLP/gRPC, half over OTLP/HTTP) logged %d lines in %d traces; vlselect finds %d\n",
		tierServices, logged, tierServices*tierBursts, stored)

	fmt.Fprintf(w, "\neach replica's share of the records (its own count of records accepted):\n")
	shares := make([]float64, len(tr.gateways))
	var total float64
	for i, h := range gateways.Hosts {
		n, err := otelcol.Metric(ctx, tr.ports.MetricsURL(h), gateways.AcceptedMetric)
		if err != nil {
			return err
		}
		shares[i], total = n, total+n
	}
	for i, h := range gateways.Hosts {
		fmt.Fprintf(w, "  gateway %s: %.0f records (%.1f%%)\n", h, shares[i], 100*shares[i]/max(total, 1))
	}

	fmt.Fprintf(w, "\nVictoriaLogs's web UI, on vlselect: %s\n", tr.vl.Select.UIURL())
	t := traces[0]
	query := "trace_id:=" + t.id.String()
	n, err := tr.vl.Count(ctx, query)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\none trace, %s's request %d: %d lines\n  LogsQL: %s\n  vmui:   %s\n", t.service, t.burst, n, query, tr.vl.Select.QueryUIURL(query))
	all := "* | stats by (service.name) count() lines"
	fmt.Fprintf(w, "\nevery line of the run, by service:\n  LogsQL: %s\n  vmui:   %s\n", all, tr.vl.Select.QueryUIURL(all))
	return nil
}

// processes are the tier's processes, as the user knows them.
func (tr *tierRun) processes() []named {
	var ps []named
	for i, p := range tr.gateways {
		ps = append(ps, named{"gateway " + gateways.Hosts[i], p})
	}
	for i, s := range tr.vl.Storage {
		ps = append(ps, named{fmt.Sprintf("VictoriaLogs storage node %d", i), s})
	}
	return append(ps, named{"vlinsert", tr.vl.Insert}, named{"vlselect", tr.vl.Select})
}
