//go:build linux

package integration

// The outage harness (issue 32, "Ride out an outage"). The trial's shape,
// four ranks logging through NewLoggerProvider at its defaults, each a
// child process: rank 0 busy (10,000 lines/s), rank 1 quiet at the target's
// bound (1,000 lines/s), ranks 2 and 3 quiet (100 lines/s). They log for a
// few seconds, the collector (the Collector's own OTLP receiver) goes away
// for the outage, comes back on the same port, they log a few seconds
// more and shut down. Each line carries its rank and number, so that the
// collector's side tells what arrived, how often. Reported per rank:
// logged, delivered, lost by cause (dropped: the queue was full; failed:
// exports that failed or gave way), duplicated, and peak memory (VmHWM).
//
// The targets: spool off, defaults, a quiet rank (1,000 lines/s or less)
// loses nothing through a 60 s outage; spool on, no rank loses anything
// through 60 s, and longer outages lose lines only at the spool's bound,
// dropped and told. The short form, which CI runs, checks the first
// through 20 s; the long forms' figures are in
// benchmarks/results/outage.txt, outage-spool.txt and docs/delivery.md.
//
//	go test -run '^TestOutageHarness$' -v .                                # short: 20 s, spool off, about 40 s
//	ZAPLENS_OUTAGE=long go test -run '^TestOutageHarness$' -v -timeout 30m . # 20 s and 60 s, spool off and on
//	ZAPLENS_OUTAGE=spool go test -run '^TestOutageHarness$' -v -timeout 30m . # 20 s and 60 s, spool on
//	ZAPLENS_OUTAGE=spool5m go test -run '^TestOutageHarness$' -v -timeout 30m . # 5 minutes, spool on
//	ZAPLENS_OUTAGE=5m go test -run '^TestOutageHarness$' -v -timeout 60m .   # the long form and 5 minutes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport/childproc"
	"github.com/zaplens/zaplens/otlplog"
)

// outageMode is read when the package is initialised: TestMain clears every
// ZAPLENS_* variable before the tests.
var outageMode = os.Getenv("ZAPLENS_OUTAGE")

// Not ZAPLENS_*: TestMain clears those.
const outageChildEnv = "OUTAGE_CHILD" // the child's outageChild, as JSON

// outageChild is what one rank does.
type outageChild struct {
	Endpoint string
	Rank     int
	Rate     int           // lines a second
	Logging  time.Duration // then Shutdown
	Spool    string        // "": off
}

// outageReport is what a rank says when it ends.
type outageReport struct {
	Stats        otlplog.Stats
	ShutdownErr  string
	ShutdownTook time.Duration // what was still queued when logging ended was sent meanwhile
	PeakRSS      int64         // bytes
	told         string        // its stderr: what the loss writer said
}

// outageRanks is the trial's shape.
var outageRanks = []int{10000, 1000, 100, 100}

// quietRate is the target's bound: a rank at or under it loses nothing.
const quietRate = 1000

type outageScenario struct {
	down  time.Duration
	spool bool
}

func (s outageScenario) String() string {
	return fmt.Sprintf("down %v, spool %s", s.down, map[bool]string{false: "off", true: "on"}[s.spool])
}

func outageScenarios() []outageScenario {
	switch outageMode {
	case "spool":
		return []outageScenario{{20 * time.Second, true}, {60 * time.Second, true}}
	case "spool5m":
		return []outageScenario{{5 * time.Minute, true}}
	case "long", "5m":
		s := []outageScenario{{20 * time.Second, false}, {60 * time.Second, false}, {20 * time.Second, true}, {60 * time.Second, true}}
		if outageMode == "5m" {
			s = append(s, outageScenario{5 * time.Minute, false}, outageScenario{5 * time.Minute, true})
		}
		return s
	}
	return []outageScenario{{20 * time.Second, false}}
}

// Before and after the outage, the ranks log this long.
const (
	outageWarm = 3 * time.Second
	outageTail = 5 * time.Second
)

func TestOutageHarness(t *testing.T) {
	if os.Getenv(outageChildEnv) != "" {
		t.Skip("a child")
	}
	if testing.Short() {
		t.Skip("an outage of 20 s at least")
	}
	for _, sc := range outageScenarios() {
		t.Run(strings.ReplaceAll(sc.String(), " ", ""), func(t *testing.T) { runOutage(t, sc) })
	}
}

func runOutage(t *testing.T, sc outageScenario) {
	led := newOutageLedger(len(outageRanks))
	r := StartReceiver(t, WithConsumeHook(led.consume))
	logging := outageWarm + sc.down + outageTail
	var wg sync.WaitGroup
	reports := make([]outageReport, len(outageRanks))
	for rank, rate := range outageRanks {
		cfg := outageChild{Endpoint: r.URL(), Rank: rank, Rate: rate, Logging: logging}
		if sc.spool {
			cfg.Spool = t.TempDir()
		}
		wg.Go(func() { reports[rank] = runOutageChild(t, cfg) })
	}
	time.Sleep(outageWarm)
	r.Stop(t)
	time.Sleep(sc.down)
	r.Start(t)
	wg.Wait()

	t.Logf("%v: rank (lines/s): logged, delivered, lost (dropped: queue full; failed: gave way or failed), duplicated, peak RSS", sc)
	for rank, rep := range reports {
		s := rep.Stats
		delivered, dups := led.count(rank)
		lost := int64(s.Emitted) - int64(delivered)
		t.Logf("  rank %d (%d/s): logged %d, delivered %d, lost %d (dropped %d, failed %d, kept in the spool %d), duplicated %d, peak RSS %.0f MB, Shutdown took %v",
			rank, outageRanks[rank], s.Emitted, delivered, lost, s.Dropped, s.Failed, s.Kept, dups, float64(rep.PeakRSS)/1e6, rep.ShutdownTook.Round(10*time.Millisecond))
		if s.Emitted != s.Exported+s.Dropped+s.Failed+s.Queued || s.Queued != 0 {
			t.Errorf("rank %d: stats do not add up, or records still queued after Shutdown: %+v", rank, s)
		}
		if lost > int64(s.Dropped+s.Failed) { // a failed export may have arrived all the same
			t.Errorf("rank %d: %d lines lost but %d counted (dropped %d, failed %d)", rank, lost, s.Dropped+s.Failed, s.Dropped, s.Failed)
		}
		if sc.spool && (s.Failed != 0 || s.Dropped != 0 && !strings.Contains(rep.told, "at its bound")) {
			t.Errorf("rank %d, spool on: %d failed, %d dropped: want losses only at the spool's bound, and that told; stderr:\n%s", rank, s.Failed, s.Dropped, rep.told)
		}
		if sc.spool && sc.down <= time.Minute && lost != 0 {
			t.Errorf("rank %d, spool on: lost %d lines through a %v outage: the disk holds what the queue cannot; Shutdown: %s", rank, lost, sc.down, rep.ShutdownErr)
		}
		if outageRanks[rank] <= quietRate && sc.down <= time.Minute && lost != 0 {
			t.Errorf("rank %d, quiet (%d lines/s): lost %d lines through a %v outage; Shutdown: %s", rank, outageRanks[rank], lost, sc.down, rep.ShutdownErr)
		}
	}
}

// runOutageChild runs one rank to its end and returns its report.
func runOutageChild(t *testing.T, cfg outageChild) outageReport {
	cmd := childproc.Command("TestOutageChild", outageChildEnv, cfg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("rank %d: %v; stderr:\n%s", cfg.Rank, err, stderr.String())
		return outageReport{}
	}
	var rep outageReport
	_, line, _ := strings.Cut(stdout.String(), "report ")
	line, _, _ = strings.Cut(line, "\n")
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		t.Errorf("rank %d: no report (%v) in its output:\n%s\nstderr:\n%s", cfg.Rank, err, stdout.String(), stderr.String())
	}
	rep.told = stderr.String()
	return rep
}

// TestOutageChild is a rank: it logs numbered lines at its rate through a
// NewLoggerProvider at its defaults, shuts down, and reports.
func TestOutageChild(t *testing.T) {
	var cfg outageChild
	if !childproc.Config(outageChildEnv, &cfg) {
		t.Skip("run by TestOutageHarness")
	}
	opts := []otlplog.Option{otlplog.WithEndpoint(cfg.Endpoint), otlplog.WithServiceName("rank" + strconv.Itoa(cfg.Rank))}
	if cfg.Spool != "" {
		opts = append(opts, otlplog.WithSpool(cfg.Spool))
	}
	p, err := otlplog.NewLoggerProvider(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	const tick = 10 * time.Millisecond
	perTick := max(cfg.Rate*int(tick)/int(time.Second), 1)
	seq := 0
	for end := time.Now().Add(cfg.Logging); time.Now().Before(end); time.Sleep(tick) {
		for range perTick {
			logger.Info("step done", zap.Int("rank", cfg.Rank), zap.Int("seq", seq), zap.Float64("loss", 0.41), zap.String("phase", "train"))
			seq++
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep := outageReport{}
	queued := time.Now()
	if err := p.Shutdown(ctx); err != nil {
		rep.ShutdownErr = err.Error()
	}
	rep.ShutdownTook = time.Since(queued)
	rep.Stats = p.Stats()
	rep.PeakRSS = peakRSS()
	b, _ := json.Marshal(rep)
	fmt.Printf("report %s\n", b)
}

// peakRSS is the process's peak resident memory, VmHWM.
func peakRSS() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// outageLedger counts, per rank and line number, the copies that arrived.
type outageLedger struct {
	mu     sync.Mutex
	copies [][]uint8
}

func newOutageLedger(ranks int) *outageLedger {
	return &outageLedger{copies: make([][]uint8, ranks)}
}

func (l *outageLedger) consume(_ int, ld plog.Logs) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for lr := range logRecords(ld) {
		attrs := lr.Attributes()
		rank, ok1 := attrs.Get("rank")
		seq, ok2 := attrs.Get("seq")
		if !ok1 || !ok2 || rank.Int() < 0 || int(rank.Int()) >= len(l.copies) || seq.Int() < 0 || seq.Int() >= 1<<30 {
			continue
		}
		c := &l.copies[rank.Int()]
		for int(seq.Int()) >= len(*c) {
			*c = append(*c, 0)
		}
		(*c)[seq.Int()]++
	}
	return nil
}

// count is how many of a rank's lines arrived, and how many copies more.
func (l *outageLedger) count(rank int) (delivered, dups int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.copies[rank] {
		if n > 0 {
			delivered++
			dups += int(n) - 1
		}
	}
	return delivered, dups
}
