//go:build linux

package integration

// A fleet behind a Collector tier (issue 35), every part a real process:
// three gateway replicas of the Collector built from deploy/'s manifest
// (internal/otelcol), running deploy/gateway.yaml (tier_gateway_test.go
// says what the test changes) with its persistent queue, on 127.0.0.2, .3
// and .4, one port; a name that resolves to the three, served by the
// test's own DNS server (tier_dns_test.go); a VictoriaLogs cluster of two
// storage nodes, a vlinsert and a vlselect, the same binary as the other
// VictoriaLogs tests; and eight services (tier_child_test.go), each its own
// zaplens pipeline with a spool, half over OTLP/gRPC and half over
// OTLP/HTTP, logging bursts of lines, each burst a trace.
//
// During the run one gateway is killed (SIGKILL) and started again on its
// queue, one storage node is stopped for 20 s and started again, and one
// service is killed (SIGKILL) and started again on its spool. Then, through
// vlselect: every line whose logging call returned is stored, duplicates
// are counted, and every burst is found by its trace id. The test reports
// each replica's share of the records (its own count of accepted records),
// the lines per second, and the CPU each process spent.
//
//	ZAPLENS_TIER=long go test -run '^TestTier$' -v -timeout 30m .
//	  ZAPLENS_TIER_DURATION=2m (default 60s, at least 40s): how long the services log
//	  ZAPLENS_TIER_FAULTS=gateway (default gateway,storage,service): the faults
//	  to make, to count each one's duplicates alone; "add" also starts a
//	  fourth replica at 4/6 of the run and adds it to the name
//	  ZAPLENS_TIER_SERVICES=1 (default 8): how many services log; one alone
//	  gives a fleet process's CPU per line without its neighbours
//	  ZAPLENS_TIER_CPUPROFILE=DIR: each service's CPU profile, DIR/<service>-<life>.prof
//	  ZAPLENS_TIER_BATCH=8192 (default 512): the services' batch; 512 makes a
//	  killed service's one request in flight small, 8192 is the default
//	  ZAPLENS_TIER_PAUSE=20ms (default 100ms): each goroutine's pause between
//	  bursts; shorter offers more than the tier takes, to find where it saturates

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/gateways"
	"github.com/zaplens/zaplens/internal/otelcol"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/internal/testsupport/childproc"
	"github.com/zaplens/zaplens/internal/victorialogs"
)

// tierSettings is read when the package is initialised: TestMain clears
// every ZAPLENS_* variable before the tests.
var tierSettings = readTierSettings()

type tierMode struct {
	on         bool
	duration   time.Duration
	pause      time.Duration // between a goroutine's bursts: the offered load
	faults     []string      // the faults to make: gateway, storage, service, add
	services   int           // how many services log
	cpuprofile string        // a directory for each service's CPU profile
	batch      int           // the services' batch: the size of one request
	err        error
}

// fault reports whether the run makes the named fault.
func (m tierMode) fault(name string) bool { return slices.Contains(m.faults, name) }

func readTierSettings() tierMode {
	var e envSettings
	m := tierMode{
		on:         os.Getenv("ZAPLENS_TIER") == "long",
		duration:   e.duration("ZAPLENS_TIER_DURATION", 60*time.Second, 40*time.Second), // the faults need 40 s
		pause:      e.duration("ZAPLENS_TIER_PAUSE", tierPause, 0),
		faults:     e.list("ZAPLENS_TIER_FAULTS", "gateway,storage,service", "gateway", "storage", "service", "add", "none"),
		services:   e.count("ZAPLENS_TIER_SERVICES", tierServices, 1),
		cpuprofile: os.Getenv("ZAPLENS_TIER_CPUPROFILE"),
		batch:      e.count("ZAPLENS_TIER_BATCH", tierBatch, 1),
	}
	m.err = e.err()
	return m
}

// The fleet.
const (
	tierName       = "gateway.tier.test"
	tierServices   = 8
	tierGoroutines = 2
	tierBurst      = 200 // lines per goroutine per burst: one trace
	// A service's Shutdown: offered more than the tier takes, it spends
	// all of it and keeps the rest in its spool.
	tierShutdownTimeout = 60 * time.Second
	tierPause           = 100 * time.Millisecond // ZAPLENS_TIER_PAUSE; 32,000 lines/s offered in all
	tierBatch           = 512                    // the services' batch: the size of one request
)

var tierHosts = gateways.Hosts

// tierSpareHost is the replica the "add" fault starts during the run and
// adds to the name.
const tierSpareHost = "127.0.0.5"

// tier is the running tier.
type tier struct {
	t        *testing.T
	root     string
	otelBin  string
	vlBin    string
	ports    gateways.Ports
	dns      *gateways.DNS
	gwConfig string
	gateways []*tierGateway
	vl       *victorialogs.Cluster
	services []*tierService
	samples  []tierSample // every replica's count, every scrape
}

// tierSample is every replica's count of accepted records (all its lives)
// at one scrape.
type tierSample struct {
	at       time.Time
	accepted []float64
}

// tierGateway is one replica, over its lives.
type tierGateway struct {
	host     string
	proc     *otelcol.Process
	mu       sync.Mutex
	accepted []float64 // per life, its last count of log records accepted
	sent     []float64 // per life, its last count of log records its exporter sent
	restart  time.Time // when it was last started again, or added to the name; zero if never
}

// tierService is one service, over its lives.
type tierService struct {
	name  string
	proto Proto
	dir   string
	lives []*tierLife
}

type tierLife struct {
	proc     *childproc.Proc
	stderr   *testsupport.LockedBuffer
	progress string
	killed   bool
	logged   []uint64 // per goroutine
	report   *tierChildReport
}

func TestTier(t *testing.T) {
	mode := tierSettings
	if mode.err != nil {
		t.Fatal(mode.err)
	}
	if !mode.on {
		t.Skip("the Collector tier runs in the long mode only: ZAPLENS_TIER=long go test -run '^TestTier$' -v -timeout 30m .")
	}
	tr := &tier{t: t, root: tierWorkDir(t)}
	tr.build()
	tr.startCluster()
	tr.startGateways()
	tr.startServices()
	stopScrape := tr.scrape()

	start := time.Now()
	d := mode.duration
	at := func(frac float64) { time.Sleep(time.Until(start.Add(time.Duration(frac * float64(d))))) }
	events := []string{}
	note := func(format string, args ...any) {
		s := fmt.Sprintf("%6.1fs  ", time.Since(start).Seconds()) + fmt.Sprintf(format, args...)
		events = append(events, s)
		t.Log(s)
	}
	note("%d services logging; 3 gateways; 2 storage nodes", len(tr.services))

	at(1.0 / 6)
	if mode.fault("gateway") {
		tr.restartGateway(1, note)
	}

	at(2.0 / 6)
	var restartStorageAt time.Time
	if mode.fault("storage") {
		note("storage node 1 (%s) stopped", tr.vl.Storage[1].Addr())
		tr.vl.Storage[1].Stop()
		restartStorageAt = time.Now().Add(20 * time.Second)
	}

	at(3.0 / 6)
	if mode.fault("service") {
		tr.restartService(min(3, len(tr.services)-1), note)
	}

	if !restartStorageAt.IsZero() {
		time.Sleep(time.Until(restartStorageAt))
		if err := tr.vl.RestartStorage(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		note("storage node 1 started again, after 20 s")
	}

	at(4.0 / 6)
	if mode.fault("add") {
		tr.addGateway(note)
	}

	at(1)
	cpu := tr.cpu()
	tr.stopServices()
	logging := time.Since(start)
	note("services stopped")
	stored, drained := tr.drain(note)
	stopScrape()
	tr.report(logging, drained.Sub(start), stored, cpu)
}

// tierWorkDir is the run's directory: the processes' data and logs, kept
// when the test fails.
func tierWorkDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "zaplens-tier-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the run's data and the gateways' logs are kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// build finds or builds the Collector and VictoriaLogs.
func (tr *tier) build() {
	t := tr.t
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin, err := otelcol.Binary(ctx, tLogWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	tr.otelBin = bin
	t.Logf("Collector %s ready in %v", bin, time.Since(start).Round(time.Millisecond))
	tr.vlBin = vlBinary(t)
}

// tLogWriter writes to the test's log.
type tLogWriter struct{ t *testing.T }

func (w tLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// startCluster starts two storage nodes, a vlinsert and a vlselect.
func (tr *tier) startCluster() {
	c, err := victorialogs.StartCluster(context.Background(), tr.vlBin, tr.root, 2)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.t.Cleanup(c.Stop)
	tr.vl = c
}

// startGateways starts the three replicas, on one set of ports free on
// every address, and the DNS server that names them.
func (tr *tier) startGateways() {
	t := tr.t
	hosts := tierHosts
	if tierSettings.fault("add") {
		hosts = append(slices.Clone(hosts), tierSpareHost)
	}
	ports, err := gateways.FreePorts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	tr.ports = ports
	tr.gwConfig = tierGatewayConfig(t, tr.root)
	for _, h := range tierHosts {
		gw := &tierGateway{host: h}
		tr.gateways = append(tr.gateways, gw)
		tr.startGateway(gw)
	}
	if tierSettings.fault("add") {
		tr.gateways = append(tr.gateways, &tierGateway{host: tierSpareHost}) // started by addGateway
	}
	tr.dns = startTierDNS(t, tierName, tierHosts)
}

// addGateway starts the spare replica and adds it to the name: a tier
// scaled up while the services send.
func (tr *tier) addGateway(note func(string, ...any)) {
	gw := tr.gateways[len(tr.gateways)-1]
	tr.startGateway(gw)
	if err := tr.dns.SetAddrs(append(slices.Clone(tierHosts), gw.host)); err != nil {
		tr.t.Fatal(err)
	}
	gw.mu.Lock()
	gw.restart = time.Now()
	gw.mu.Unlock()
	note("gateway %s started and added to the name", gw.host)
}

func (tr *tier) startGateway(gw *tierGateway) {
	t := tr.t
	out, err := os.OpenFile(filepath.Join(tr.root, "gateway-"+gw.host+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	p, err := gateways.Start(context.Background(), tr.otelBin, tr.root, gw.host, tr.ports, tr.gwConfig, tr.vl.Insert.Addr(), out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	gw.mu.Lock()
	gw.proc = p
	gw.accepted = append(gw.accepted, 0)
	gw.sent = append(gw.sent, 0)
	gw.mu.Unlock()
}

// restartGateway kills replica i with SIGKILL and starts it again on its
// address and its queue directory.
func (tr *tier) restartGateway(i int, note func(string, ...any)) {
	gw := tr.gateways[i]
	tr.scrapeOne(gw) // its last count before it dies
	gw.proc.Kill()
	note("gateway %s killed (SIGKILL)", gw.host)
	start := time.Now()
	tr.startGateway(gw)
	gw.mu.Lock()
	gw.restart = time.Now()
	gw.mu.Unlock()
	note("gateway %s started again on its queue, healthy after %v", gw.host, time.Since(start).Round(time.Millisecond))
}

// scrape reads every replica's count of accepted records every 500 ms,
// until the returned function is called.
func (tr *tier) scrape() (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			for _, gw := range tr.gateways {
				tr.scrapeOne(gw)
			}
			tr.sample()
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		for _, gw := range tr.gateways {
			tr.scrapeOne(gw)
		}
	}
}

// sample keeps every replica's count at this scrape; only the scraping
// goroutine calls it, and the report reads the samples after it stopped.
func (tr *tier) sample() {
	s := tierSample{at: time.Now(), accepted: make([]float64, len(tr.gateways))}
	for i, gw := range tr.gateways {
		gw.mu.Lock()
		for _, v := range gw.accepted {
			s.accepted[i] += v
		}
		gw.mu.Unlock()
	}
	tr.samples = append(tr.samples, s)
}

func (tr *tier) scrapeOne(gw *tierGateway) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	url := tr.ports.MetricsURL(gw.host)
	accepted, err := otelcol.Metric(ctx, url, gateways.AcceptedMetric)
	if err != nil {
		return // a replica down or starting
	}
	sent, err := otelcol.Metric(ctx, url, gateways.SentMetric)
	if err != nil {
		return
	}
	gw.mu.Lock()
	defer gw.mu.Unlock()
	life := len(gw.accepted) - 1
	gw.accepted[life] = max(gw.accepted[life], accepted)
	gw.sent[life] = max(gw.sent[life], sent)
}

// The services.

func (tr *tier) startServices() {
	for i := range tierSettings.services {
		s := &tierService{name: fmt.Sprintf("tier-svc-%d", i), proto: GRPC, dir: filepath.Join(tr.root, fmt.Sprintf("spool-%d", i))}
		if i%2 == 1 {
			s.proto = HTTP
		}
		tr.services = append(tr.services, s)
		tr.startLife(s)
	}
	for _, s := range tr.services {
		s.lives[0].proc.Expect("ready")
	}
}

func (tr *tier) startLife(s *tierService) *tierLife {
	t := tr.t
	life := len(s.lives)
	l := &tierLife{stderr: &testsupport.LockedBuffer{}, progress: filepath.Join(tr.root, fmt.Sprintf("progress-%s-%d", s.name, life))}
	if err := os.WriteFile(l.progress, make([]byte, progWords*8), 0o600); err != nil {
		t.Fatal(err)
	}
	port := tr.ports.GRPC
	if s.proto == HTTP {
		port = tr.ports.HTTP
	}
	cfg := tierChildConfig{Service: s.name, Life: life, Dir: s.dir, Endpoint: fmt.Sprintf("http://%s:%d", tierName, port),
		Proto: s.proto, DNS: tr.dns.Addr(), Goroutines: tierGoroutines, Burst: tierBurst, Pause: tierSettings.pause,
		BatchSize: tierSettings.batch, Progress: l.progress}
	cmd := childproc.Command("TestTierChild", tierChildEnv, cfg)
	if dir := tierSettings.cpuprofile; dir != "" {
		cmd.Args = append(cmd.Args, "-test.cpuprofile="+filepath.Join(dir, fmt.Sprintf("%s-%d.prof", s.name, life)))
	}
	cmd.Stderr = l.stderr
	l.proc = childproc.Start(t, cmd, func(problem string) string {
		return fmt.Sprintf("%s life %d: %s; stderr:\n%s", s.name, life, problem, l.stderr)
	})
	s.lives = append(s.lives, l)
	return l
}

// restartService kills service i with SIGKILL and starts it again on its
// spool.
func (tr *tier) restartService(i int, note func(string, ...any)) {
	s := tr.services[i]
	l := s.lives[len(s.lives)-1]
	l.proc.Kill()
	l.killed = true
	p, err := readProgress(l.progress, tierGoroutines)
	if err != nil {
		tr.t.Fatal(err)
	}
	l.logged = p.Logged
	note("service %s killed (SIGKILL) after %d lines", s.name, sum(l.logged))
	tr.startLife(s).proc.Expect("ready")
	note("service %s started again on its spool", s.name)
}

// stopServices tells every live service to stop logging and shut down,
// and reads their reports.
func (tr *tier) stopServices() {
	for _, s := range tr.services {
		s.lives[len(s.lives)-1].proc.Send("stop")
	}
	for _, s := range tr.services {
		l := s.lives[len(s.lives)-1]
		var rep tierChildReport
		line := l.proc.ExpectWithin("report ", tierShutdownTimeout+30*time.Second)
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			tr.t.Fatalf("%s: report: %v", s.name, err)
		}
		l.report, l.logged = &rep, rep.Logged
	}
}

// cpu is the CPU time each process of the tier has spent so far.
func (tr *tier) cpu() map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, gw := range tr.gateways {
		m["gateway "+gw.host+" (its last life)"] = procCPU(gw.proc.Pid())
	}
	for i, s := range tr.vl.Storage {
		m[fmt.Sprintf("storage-%d (its last life)", i)] = procCPU(s.Pid())
	}
	m["vlinsert"] = procCPU(tr.vl.Insert.Pid())
	return m
}

// procCPU reads a process's user and system time from /proc.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
