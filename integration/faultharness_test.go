//go:build linux || darwin

package integration

// The fault harness (issue 22, "Once, and told"). Over many rounds, a
// child process (faultharness_child_test.go) logs numbered lines in bursts
// from several goroutines through a spooled NewLoggerProvider, sometimes
// CPU-starved (GOMAXPROCS=1 and busy goroutines beside the loggers; in the
// long mode busy processes too), while the collector flaps: down, up, slow,
// refusing a batch with 400 (InvalidArgument over gRPC), answering 200 with
// an empty body and no content type (OTLP/HTTP). Each child is killed with
// SIGKILL at a random moment, and the next starts on the same directory
// and recovers what it left. A final child logs through one more outage (a
// ForceFlush that fails, then the collector back), shuts down cleanly, and
// a ShipSpool on the directory afterwards must find nothing to send again.
//
// Every line whose logging call returned before the kill must arrive, or
// have been refused by the harness's collector (and then be counted and
// told); duplicates must stay within one request per kill, and one per
// answer the collector's outage cut from a live child, counted apart;
// Stats must add up; no child prints a line twice; a child that lost crash protection
// says so; lines logged after an outage arrive within one schedule delay
// plus one retry backoff.
//
//	go test -run '^TestFaultHarness$' -v .                      # short: 6 rounds, well under a minute
//	ZAPLENS_FAULTS=long go test -run '^TestFaultHarness$' -v -timeout 30m .
//	  ZAPLENS_FAULTS_DURATION=10m (default 5m) or ZAPLENS_FAULTS_ROUNDS=n; ZAPLENS_FAULTS_SEED=n replays a run;
//	  ZAPLENS_FAULTS_KINDS=down,slow (of down, slow, refuse, empty200, json200) draws only those faults
//	  ZAPLENS_FAULTS_SPOOL=off leaves out the spool's stages; ZAPLENS_FAULTS_CUT=off leaves out the spool files cut under live children (long mode)

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/internal/testsupport/childproc"
	"github.com/zaplens/zaplens/otlplog"
)

// faultSettings is the harness's mode, read when the package is
// initialised: TestMain clears every ZAPLENS_* variable before the tests.
var faultSettings = readFaultSettings()

type faultMode struct {
	long     bool
	rounds   int           // 0: until duration
	duration time.Duration // long mode
	seed     uint64
	kinds    []string // the collector's faults to draw from; nil: all
	// spoolFaults: the spool's stages (faultharness_spool_test.go); off
	// with ZAPLENS_FAULTS_SPOOL=off. cuts: spool files cut under live
	// children in the long mode, unless ZAPLENS_FAULTS_CUT=off.
	spoolFaults, cuts bool
	err               error
}

func readFaultSettings() faultMode {
	var e envSettings
	m := faultMode{rounds: 6, seed: uint64(time.Now().UnixNano()), spoolFaults: os.Getenv("ZAPLENS_FAULTS_SPOOL") != "off",
		cuts: os.Getenv("ZAPLENS_FAULTS_CUT") != "off"}
	if os.Getenv("ZAPLENS_FAULTS") == "long" {
		m.long, m.rounds, m.duration = true, 0, 5*time.Minute
	}
	if os.Getenv("ZAPLENS_FAULTS_DURATION") != "" {
		m.rounds, m.duration = 0, e.duration("ZAPLENS_FAULTS_DURATION", 0, 0)
	}
	m.rounds = e.count("ZAPLENS_FAULTS_ROUNDS", m.rounds, 0)
	if v := os.Getenv("ZAPLENS_FAULTS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			e.bad("ZAPLENS_FAULTS_SEED", "%v", err)
		}
		m.seed = n
	}
	if os.Getenv("ZAPLENS_FAULTS_KINDS") != "" {
		m.kinds = e.list("ZAPLENS_FAULTS_KINDS", "", "down", "slow", "refuse", "empty200", "json200")
	}
	m.err = e.err()
	return m
}

// The children's configuration. A small batch makes many requests, and
// makes "one request per kill" a tight bound on duplicates.
const (
	faultGoroutines    = 4
	faultBatch         = 1024
	faultScheduleDelay = 200 * time.Millisecond
	faultTail          = 3 * time.Second // the collector up, at the end of each round
	faultFinalLines    = 100             // per goroutine, four times: the final child's
)

// faultRetryWait is the longest wait an export's retry can still have to
// go, when the collector comes back after an outage of d: the transport's
// backoff (internal/transport/retry.go: 500ms, times 1.6 a step, at most
// 5s, ±20%), taking the most steps d can hold and the longest wait of the
// step after them.
func faultRetryWait(d time.Duration) time.Duration {
	step, spent := 500*time.Millisecond, time.Duration(0)
	for step < 5*time.Second && spent+step*8/10 <= d {
		spent += step * 8 / 10
		step = min(step*16/10, 5*time.Second)
	}
	return step * 12 / 10
}

// faultPhase is one state of the collector, applied at At.
type faultPhase struct {
	Kind string // up, down, slow, refuse (the next request gets 400), empty200, json200 (HTTP: stored, then 200 with an empty body, or "{}")
	At   time.Time
	D    time.Duration // planned length
	Slow time.Duration // slow: how long the collector takes over each request
}

func (p faultPhase) String() string {
	return fmt.Sprintf("%s %dms", p.Kind, p.D.Milliseconds())
}

// faultRound is one child's life.
type faultRound struct {
	i        int
	proto    Proto
	starved  bool
	burst    int
	phases   []faultPhase
	started  time.Time
	killed   time.Time // zero for the final child
	progress faultProgress
	stderr   string
	report   *faultChildReport // the final child's
	odd200   int64             // answers 200 with an empty or JSON body
	cut      *faultCut         // a spool file of its cut under it
	dir      string            // its spool, if not the harness's
}

func (r *faultRound) String() string {
	var ph []string
	for _, p := range r.phases {
		if p.At.IsZero() || (!r.killed.IsZero() && p.At.After(r.killed)) {
			break
		}
		ph = append(ph, p.String())
	}
	s := fmt.Sprintf("round %d [%s, burst %d×%d", r.i, r.proto.Short(), faultGoroutines, r.burst)
	if r.starved {
		s += ", CPU-starved"
	}
	s += "; collector: " + strings.Join(ph, ", ")
	if c := r.cut; c != nil && c.what != "" {
		s += fmt.Sprintf("; after %v, %s", c.after.Round(time.Millisecond), c.what)
	}
	if !r.killed.IsZero() {
		s += fmt.Sprintf("; SIGKILL after %v", r.killed.Sub(r.started).Round(time.Millisecond))
	}
	return s + "]"
}

func TestFaultHarness(t *testing.T) {
	mode := faultSettings
	if mode.err != nil {
		t.Fatal(mode.err)
	}
	if !mode.long {
		t.Parallel() // overlaps the parallel scenarios, which mostly wait
	}
	h := newFaultHarness(t, mode)
	start := time.Now()
	for i := 0; ; i++ {
		if mode.rounds > 0 && i >= mode.rounds || mode.rounds == 0 && time.Since(start) >= mode.duration {
			break
		}
		h.round(i)
		if t.Failed() && !mode.long {
			break
		}
	}
	h.final()
	h.spoolStages(len(h.rounds) + 1) // after the final ShipSpool's sender
	h.check()
	t.Logf("seed %d (ZAPLENS_FAULTS_SEED replays it); %v", mode.seed, time.Since(start).Round(time.Millisecond))
}

type faultHarness struct {
	t      *testing.T
	mode   faultMode
	rng    *rand.Rand
	dir    string // the spool
	work   string // progress files
	r      *Receiver
	front  *faultFront
	led    *faultLedger
	rounds []*faultRound
	spin   []*exec.Cmd // busy processes of the round under way

	stages            faultStages
	cutLost           int         // lines lost with spool files cut under their child, and told
	afterShutdown     faultCopies // what arrived after the final child's clean Shutdown
	shipStats         otlplog.ShipStats
	shipErr           error
	worstRecovery     time.Duration
	worstRecoveryNote string
	// outages is how many times the collector came back after being down;
	// outagesMeasured, after how many of them a line's delivery was timed.
	outages, outagesMeasured int
}

func newFaultHarness(t *testing.T, mode faultMode) *faultHarness {
	h := &faultHarness{t: t, mode: mode, rng: rand.New(rand.NewPCG(mode.seed, 22)),
		dir: t.TempDir(), work: t.TempDir(), led: newFaultLedger()}
	h.r = StartReceiver(t, WithConsumeHookMetadata(h.led.consume))
	h.front = startFaultFront(t, h.r.HTTPURL(), h.led)
	t.Cleanup(h.stopSpinners)
	return h
}

func (h *faultHarness) endpoint(p Proto) string {
	if p == HTTP {
		return h.front.URL()
	}
	return h.r.URL()
}

// dur is a random duration in [0, d).
func (h *faultHarness) dur(d time.Duration) time.Duration {
	return time.Duration(h.rng.Int64N(int64(d)))
}

// apply puts the collector in the state of phase p.
func (h *faultHarness) apply(p *faultPhase) {
	p.At = time.Now()
	h.led.setSlow(0)
	h.led.disarm()
	h.front.answer.Store(frontForward)
	switch p.Kind {
	case "down":
		h.front.down()
		h.r.Stop(h.t)
		return
	case "slow":
		h.led.setSlow(p.Slow)
	case "refuse":
		h.led.arm()
	case "empty200":
		h.front.answer.Store(frontEmpty)
	case "json200":
		h.front.answer.Store(frontJSON)
	}
	h.r.Start(h.t)
	h.front.up(h.t)
}

// plan draws a round's collector phases: one to three faults with short
// spells of health between them, then a tail long enough to see the
// lines logged after an outage delivered. Every draw of a round is made
// before it starts, whatever its timing: a seed replays the same rounds.
func (h *faultHarness) plan(round int, proto Proto) []faultPhase {
	kinds := []string{"down", "slow", "refuse"}
	if proto == HTTP {
		kinds = append(kinds, "empty200", "json200")
	}
	if h.mode.kinds != nil {
		kinds = slices.DeleteFunc(kinds, func(k string) bool { return !slices.Contains(h.mode.kinds, k) })
	}
	if len(kinds) == 0 {
		kinds = []string{"up"} // empty200 alone, over gRPC
	}
	// The first fault goes round every kind, so that a short run sees each.
	first := []string{"down", "refuse", "empty200", "json200", "slow", "refuse"}[round%6]
	if !slices.Contains(kinds, first) {
		first = kinds[h.rng.IntN(len(kinds))]
	}
	var ph []faultPhase
	for n := 1 + h.rng.IntN(3); n > 0; n-- {
		ph = append(ph, faultPhase{Kind: first, D: 200*time.Millisecond + h.dur(800*time.Millisecond)})
		if first == "slow" {
			ph[len(ph)-1].Slow = 300*time.Millisecond + h.dur(700*time.Millisecond)
		}
		first = kinds[h.rng.IntN(len(kinds))]
		ph = append(ph, faultPhase{Kind: "up", D: 100*time.Millisecond + h.dur(300*time.Millisecond)})
	}
	ph[len(ph)-1].D = faultTail
	return ph
}

func (h *faultHarness) round(i int) {
	t := h.t
	rd := &faultRound{i: i, proto: protos[(i/2)%2], starved: i%2 == 1, burst: []int{200, 1000, 3000}[h.rng.IntN(3)]}
	if h.mode.long {
		rd.burst = []int{200, 1000, 5000, 20000}[h.rng.IntN(4)]
	}
	rd.phases = h.plan(i, rd.proto)
	h.rounds = append(h.rounds, rd)
	if rd.starved && h.mode.long {
		h.startSpinners()
	}
	defer h.stopSpinners()

	total := time.Duration(0)
	for _, p := range rd.phases {
		total += p.D
	}
	killAt := 300*time.Millisecond + h.dur(total-300*time.Millisecond)
	rd.cut = h.planCut(i, rd.phases, &killAt)
	c := h.startChild(rd, false)
	c.Expect("ready")
	rd.started = time.Now()
	if rd.cut != nil {
		timer := time.AfterFunc(rd.cut.after, func() { h.cut(rd.cut, c.Cmd.Process.Pid) })
		defer func() {
			if timer.Stop() {
				close(rd.cut.done)
			}
			<-rd.cut.done
		}()
	}
	odd := h.front.emptied.Load()
	defer func() { rd.odd200 = h.front.emptied.Load() - odd }()
	for k := range rd.phases {
		left := killAt - time.Since(rd.started)
		if left <= 0 {
			break
		}
		h.apply(&rd.phases[k])
		time.Sleep(min(left, rd.phases[k].D))
	}
	_ = c.Cmd.Process.Kill() // an error: it ended by itself, told below
	rd.killed = time.Now()
	err := c.Cmd.Wait()
	if ws, ok := c.Cmd.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !ws.Signaled() {
		t.Errorf("%v: the child ended by itself before the kill (%v); stderr:\n%s", rd, err, c.stderr)
	}
	rd.stderr = c.stderr.String()
	rd.progress, err = readProgress(c.progress, faultGoroutines)
	if err != nil {
		t.Fatal(err)
	}
	h.led.setRound(i + 1)
	h.r.Reset() // the ledger keeps what counts; the sink would hold every record
	logged := sum(rd.progress.Logged)
	st := "no stats"
	if s := rd.progress.Snap; s != nil {
		st = fmt.Sprintf("unprotected %d, recovered %d (%d exported, %d failed)", s.Unprotected, s.Recovered, s.RecoveredExported, s.RecoveredFailed)
	}
	t.Logf("%v: %d lines logged; %s; longest logging call %v", rd, logged, st, rd.progress.LongestCall.Round(time.Millisecond))
}

// final is the last child. Through an outage it logs (A), its ForceFlush
// fails, the collector comes back, it logs more (B); once every line of
// every round and B have arrived, one more outage: it logs (C), its
// ForceFlush fails, the collector comes back, it logs (D) and shuts down
// at once, so that Shutdown sends D. Then a ShipSpool on the directory
// must send nothing again. A and C may be failed by the flushes: counted,
// and told by Shutdown's error (the README's exports that fail for good).
func (h *faultHarness) final() {
	t := h.t
	rd := &faultRound{i: len(h.rounds), proto: protos[h.rng.IntN(2)], starved: h.rng.IntN(2) == 0, burst: faultFinalLines}
	h.rounds = append(h.rounds, rd)
	rd.phases = []faultPhase{{Kind: "down"}, {Kind: "up"}, {Kind: "down"}, {Kind: "up"}}
	// What the killed children left is recovered first, with the
	// collector up: the stage is about this child's own lines.
	h.apply(&faultPhase{Kind: "up"})
	c := h.startChild(rd, true)
	c.Expect("ready")
	c.Send("recovered")
	c.Expect("recovered")
	h.apply(&rd.phases[0])
	rd.started = time.Now()
	outage := func(k int) string {
		c.Send(fmt.Sprint("log ", faultFinalLines))
		c.Expect("logged")
		c.Send("flush")
		flushed := c.Expect("flushed ")
		h.apply(&rd.phases[k+1])
		rd.phases[k].D = rd.phases[k+1].At.Sub(rd.phases[k].At)
		c.Send(fmt.Sprint("log ", faultFinalLines))
		c.Expect("logged")
		return fmt.Sprintf("ForceFlush with the collector down: %s; collector back after %v", flushed, rd.phases[k].D.Round(time.Millisecond))
	}
	t.Logf("final child, first outage: %s", outage(0))

	// Wait for everything the rounds logged, generously: a shipper that
	// backed off through the outages may wait up to 30s before it tries again.
	// The final child's lines logged before the collector came back may
	// have been failed by its ForceFlush: counted and told (checked by
	// check), not waited for.
	want := func() (missing int) {
		for _, r := range h.rounds {
			if r == rd {
				missing += h.led.missing(r.i, faultFinalLines, slices.Repeat([]uint64{2 * faultFinalLines}, faultGoroutines))
			} else {
				missing += max(0, h.led.missing(r.i, 0, r.progress.Logged)-h.cutTold(r, c.stderr.String()))
			}
		}
		return missing
	}
	// Until all have arrived, or nothing more has for 20s (a shipper that
	// backed off through the outages waits at most 30s, and starts at 1s).
	last, lastAt, deadline := want(), time.Now(), time.Now().Add(2*time.Minute)
	for last > 0 && time.Since(lastAt) < 20*time.Second && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if n := want(); n < last {
			last, lastAt = n, time.Now()
		}
	}
	if last > 0 {
		t.Errorf("with the collector up, %d lines logged before a kill or by the final child had not arrived after %v, none for the last %v",
			last, time.Since(rd.phases[1].At).Round(time.Second), time.Since(lastAt).Round(time.Second))
	}
	// The lines arrived; the child must hear so before the collector goes
	// down again. Its answer lost with the collector, their export fails,
	// and they are kept and sent again: at least once, as documented, but a
	// harness race, not what this stage checks.
	c.Send("flush")
	if err := c.Expect("flushed "); err != "<nil>" {
		t.Errorf("final child: ForceFlush with the collector up: %s", err)
	}
	h.apply(&rd.phases[2])
	t.Logf("final child, second outage: %s; then Shutdown at once", outage(2))
	c.Send("shutdown")
	var rep faultChildReport
	if err := json.Unmarshal([]byte(c.Expect("report ")), &rep); err != nil {
		t.Fatal(err)
	}
	c.Send("exit")
	_ = c.Cmd.Wait()
	rd.report = &rep
	rd.stderr = c.stderr.String()
	var err error
	if rd.progress, err = readProgress(c.progress, faultGoroutines); err != nil {
		t.Fatal(err)
	}
	h.led.setRound(rd.i + 1)

	// Nothing after a clean Shutdown: a further start on the directory
	// finds nothing of the final child's, and nothing is re-sent.
	before := h.led.copies()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	h.shipStats, h.shipErr = otlplog.ShipSpool(ctx, h.dir, otlplog.WithEndpoint(h.r.URL()), otlplog.WithProtocol(string(GRPC)), otlplog.WithLossWriter(io.Discard),
		otlplog.WithHeaders(map[string]string{faultSenderHeader: faultSender(rd.i + 1)}))
	cancel()
	time.Sleep(100 * time.Millisecond) // not an assertion: lets an answer in flight be counted
	h.afterShutdown = h.led.copies().minus(before)
	t.Logf("final child %v: Shutdown %q; stats %+v; ShipSpool afterwards: %v (%v)", rd, rep.ShutdownErr, rep.Stats, h.shipStats, h.shipErr)
}

// check compares what every child logged with what arrived, and reports.
func (h *faultHarness) check() {
	t := h.t
	var tot struct {
		rounds, starved, kills                      int
		logged, arrived, missing, refused, dups     int
		maxDupsPerKill, unprotected, repeatRefusals int
		told, killDups, flapDups, cuts              int
	}
	tot.rounds = len(h.rounds)
	final := h.rounds[len(h.rounds)-1]
	for _, rd := range h.rounds {
		if rd.starved {
			tot.starved++
		}
		if !rd.killed.IsZero() {
			tot.kills++
		}
		logged := rd.progress.Logged
		c := h.led.tally(rd.i, logged)
		n := int(sum(logged))
		tot.logged += n
		tot.arrived += c.arrived
		tot.missing += c.missing
		tot.refused += c.refused
		tot.dups += c.dups
		if rep := rd.report; rep != nil && c.missing > 0 {
			// The final child's lines logged during its outages (A, C) may
			// have been failed by its ForceFlushes: counted, and told by
			// Shutdown's error (the README: exports that fail for good).
			// Those logged with the collector up (B, D) must arrive.
			all := slices.Repeat([]uint64{faultFinalLines}, faultGoroutines)
			flushed := h.led.missing(rd.i, 0, all) + h.led.missing(rd.i, 2*faultFinalLines, slices.Repeat([]uint64{3 * faultFinalLines}, faultGoroutines))
			if uint64(flushed) <= rep.Stats.Lost() && strings.Contains(rep.ShutdownErr, "not delivered") {
				tot.told += flushed
				tot.missing -= flushed
				c.missing -= flushed
			}
		}
		if told := min(c.missing, h.cutTold(rd)); told > 0 {
			// Their only copy was on the pages cut off, and a child said
			// how many: lost for anyone, and told.
			h.cutLost += told
			tot.missing -= told
			c.missing -= told
		}
		if c.missing > 0 {
			t.Errorf("%v: %d of %d lines whose logging call had returned never arrived and were not refused by the collector (first: g%d seq %d); %s",
				rd, c.missing, n, c.firstMissing[0], c.firstMissing[1], h.childState(rd))
		}
		if c.phantom > 0 {
			t.Errorf("%v: %d lines arrived that the child never logged (past its progress): the harness's count is wrong", rd, c.phantom)
		}
		d := h.dupCauses(rd.i)
		tot.killDups += d.kill
		tot.flapDups += d.flap
		tot.maxDupsPerKill = max(tot.maxDupsPerKill, d.mostPerKill)
		for _, p := range d.problems {
			t.Errorf("%v: %s (%d lines arrived twice or more); %s", rd, p, c.dupLines, h.childState(rd))
		}
		tot.cuts += h.led.cutAnswers(rd.i)
		h.checkChild(rd)
		if s := rd.progress.Snap; s != nil {
			tot.unprotected += int(s.Unprotected)
		}
		h.checkRecoveryLatency(rd)
	}
	// The collector's refusals: counted, told, and not sent again more
	// than once per kill (a batch in flight when its process died).
	refusals := h.led.refusalLog()
	for _, ev := range refusals {
		if ev.repeat {
			tot.repeatRefusals++
		}
	}
	if tot.repeatRefusals > tot.kills {
		t.Errorf("the collector refused, with 400 / InvalidArgument, %d requests carrying lines it had refused before: a batch refused for good was sent again (more than once per kill, %d kills)", tot.repeatRefusals, tot.kills)
	}
	h.checkRefusalsTold(refusals)
	// After a clean Shutdown only what it said it kept (what a failed
	// ForceFlush could not send) is left, and nothing is sent twice.
	if a := h.afterShutdown; a.dupCopies > 0 {
		t.Errorf("after the final child's clean Shutdown, a ShipSpool on the directory sent again %d records that had arrived (of %d it sent, %d of the final child's); ShipSpool: %v (%v)",
			a.dupCopies, a.copies, a.runCopies[final.i], h.shipStats, h.shipErr)
	}
	if kept := final.report.Stats.Kept; h.shipErr != nil || h.shipStats.Found > kept {
		t.Errorf("after the final child's clean Shutdown, which kept %d records, ShipSpool found %v (%v); want at most those", kept, h.shipStats, h.shipErr)
	}
	emptied := h.front.emptied.Load()
	t.Logf("fault harness: %d rounds (%d CPU-starved, %d SIGKILLs), %d lines logged, %d arrived, %d lost, %d failed and told, %d refused by the collector (%d requests, %d of them re-sent), "+
		"%d duplicates (%d sent again after a kill, most per kill %d, allowed %d; %d sent again by a live child whose answer the collector's outage cut, %d answers cut), %d unprotected, %d kept by the clean Shutdown and shipped after it (%d of them twice), %d answers 200 with an empty or JSON body; worst delivery after an outage %v%s (timed after %d of %d outages)",
		tot.rounds, tot.starved, tot.kills, tot.logged, tot.arrived, tot.missing, tot.told, tot.refused, len(refusals), tot.repeatRefusals,
		tot.dups, tot.killDups, tot.maxDupsPerKill, faultBatch, tot.flapDups, tot.cuts, tot.unprotected, h.afterShutdown.copies, h.afterShutdown.dupCopies, emptied, h.worstRecovery.Round(time.Millisecond), h.worstRecoveryNote, h.outagesMeasured, h.outages)
	if h.mode.spoolFaults {
		t.Logf("spool faults: %s", h.spoolSummary())
	}
}

// faultDupVerdict is what the copies of one run's lines beyond the first
// came from, and what in them breaks the promise.
type faultDupVerdict struct {
	kill, flap  int // sent again after a kill; by a live child whose answer was cut
	mostPerKill int
	problems    []string
}

// dupCauses judges the copies of run's lines beyond the first, each by
// the child whose copy had arrived before it (see faultLedger.store). A
// child killed before its answer leaves one request per stream unsettled
// (its own lines, and those it was recovering): the next child to
// recover them sends them again, and if it too is killed before its
// answer, the one after it. So each kill may cost each run one request,
// charged to the child that died. A live child sends a request again
// only when it had no answer: the front went down under it, after the
// collector had stored it.
func (h *faultHarness) dupCauses(run int) faultDupVerdict {
	var v faultDupVerdict
	for k, n := range h.led.duplicates(run) {
		killed := k.sender < len(h.rounds) && !h.rounds[k.sender].killed.IsZero()
		switch {
		case k.live:
			v.flap += n
			if cut := h.led.cutAnswers(k.sender); n > cut*faultBatch {
				v.problems = append(v.problems, fmt.Sprintf("the child of round %d sent %d copies of these lines again while it lived, and the collector going down cut %d of its answers: over one request (%d records) per answer cut; %s",
					k.sender, n, cut, faultBatch, h.story(run, k.sender)))
			}
		case killed:
			v.kill += n
			v.mostPerKill = max(v.mostPerKill, n)
			if n > faultBatch {
				v.problems = append(v.problems, fmt.Sprintf("%d copies of these lines that the child of round %d had sent arrived again after its kill: over one request (%d records); %s",
					n, k.sender, faultBatch, h.story(run, k.sender)))
			}
		default:
			v.problems = append(v.problems, fmt.Sprintf("%d copies of these lines that the child of round %d had sent were sent again by another process, and that child was not killed",
				n, k.sender))
		}
	}
	return v
}

// story is when sender's child lived, and which requests carried run's
// lines it sent, first and again, in ms since the ledger's start.
func (h *faultHarness) story(run, sender int) string {
	s := ""
	if sender < len(h.rounds) {
		rd := h.rounds[sender]
		s = fmt.Sprintf("round %d's child started at %dms, killed at %dms; ", sender, rd.started.Sub(h.led.start).Milliseconds(), rd.killed.Sub(h.led.start).Milliseconds())
	}
	return s + "requests: " + h.led.requestsOf(run, sender)
}

// childState is what a failure message says about a child's end.
func (h *faultHarness) childState(rd *faultRound) string {
	s := "no stats snapshot"
	if p := rd.progress.Snap; p != nil {
		s = fmt.Sprintf("its last stats (%v before its end): %+v", rd.end().Sub(p.At).Round(time.Millisecond), p.Stats)
	}
	if rd.report != nil {
		s = fmt.Sprintf("its stats after Shutdown: %+v", rd.report.Stats)
	}
	if next := rd.i + 1; next < len(h.rounds) {
		if p := h.rounds[next].progress.Snap; p != nil {
			s += fmt.Sprintf("; the next child recovered %d, exported %d, failed %d", p.Recovered, p.RecoveredExported, p.RecoveredFailed)
		}
	}
	return s
}

// callState says how the child's logging calls went: a child whose lines
// stop coming was stuck in them, or starved of CPU.
func (rd *faultRound) callState() string {
	p := rd.progress
	if p.LastReturned.IsZero() {
		return "no logging call returned"
	}
	return fmt.Sprintf("its longest logging call took %v, the last returned %v before its end",
		p.LongestCall.Round(time.Millisecond), rd.end().Sub(p.LastReturned).Round(time.Millisecond))
}

func (rd *faultRound) end() time.Time {
	if rd.killed.IsZero() {
		if rd.progress.Snap != nil {
			return rd.progress.Snap.At
		}
		return time.Now()
	}
	return rd.killed
}

// checkChild checks a child's Stats and its stderr.
func (h *faultHarness) checkChild(rd *faultRound) {
	t := h.t
	for _, s := range []*faultSnapshot{rd.progress.Snap, reportSnap(rd.report)} {
		if s == nil {
			continue
		}
		st := s.Stats
		if st.Emitted != st.Exported+st.Dropped+st.Failed+st.Queued || st.Unprotected > st.Emitted ||
			st.RecoveredExported+st.RecoveredFailed > st.Recovered || st.Kept > st.Failed+st.Queued {
			t.Errorf("%v: the Stats identities do not hold: %+v", rd, st)
		}
	}
	if rep := rd.report; rep != nil {
		st := rep.Stats
		// Only what was logged before the collector came back can have
		// failed (the ForceFlushes during the outages).
		if st.Emitted != 4*faultFinalLines*faultGoroutines || st.Queued != 0 || st.Lost() > 2*faultFinalLines*faultGoroutines {
			t.Errorf("%v: after a clean Shutdown with the collector up, stats %+v: want %d emitted, none queued, at most the %d logged during the outages failed",
				rd, st, 4*faultFinalLines*faultGoroutines, 2*faultFinalLines*faultGoroutines)
		}
		if st.Recovered != st.RecoveredExported+st.RecoveredFailed {
			t.Errorf("%v: after a clean Shutdown with the collector up, %d of the %d records it recovered were neither delivered nor counted failed (exported %d, failed %d)",
				rd, st.Recovered-st.RecoveredExported-st.RecoveredFailed, st.Recovered, st.RecoveredExported, st.RecoveredFailed)
		}
		if rep.ShutdownErr != "" && strings.Count(rd.stderr, firstLine(rep.ShutdownErr)) > 1 {
			t.Errorf("%v: Shutdown's error, which it returns, was printed by the library too: %q", rd, firstLine(rep.ShutdownErr))
		}
	}
	seen := map[string]int{}
	for line := range strings.SplitSeq(rd.stderr, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			seen[line]++
		}
	}
	for line, n := range seen {
		if n > 1 {
			t.Errorf("%v: the child printed a line %d times: %q", rd, n, line)
		}
	}
	// Told at once: an unprotected record is said on the loss writer, not
	// only counted (the spool says it from a goroutine of its own: allow it
	// 300ms before the kill).
	if at := rd.progress.UnprotectedAt; !at.IsZero() && rd.end().Sub(at) > 300*time.Millisecond &&
		!strings.Contains(rd.stderr, "crash protection") && !strings.Contains(rd.stderr, "unprotected") {
		t.Errorf("%v: lost crash protection (Stats.Unprotected %d at %v) and said nothing on stderr:\n%s",
			rd, rd.progress.Snap.Unprotected, at.Sub(rd.started).Round(time.Millisecond), rd.stderr)
	}
}

func reportSnap(rep *faultChildReport) *faultSnapshot {
	if rep == nil {
		return nil
	}
	return &faultSnapshot{Stats: rep.Stats}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// checkRefusalsTold: each round's refusals are counted in its child's
// Stats (Failed, or RecoveredFailed for recovery's), and told on its
// stderr, when the child lived long enough after them to do both.
func (h *faultHarness) checkRefusalsTold(events []faultRefusal) {
	refused := map[int]int{}  // round -> lines refused for the first time
	answered := map[int]int{} // round -> lines refused, fresh or again
	first := map[int]time.Time{}
	last := map[int]time.Time{}
	for _, ev := range events {
		if ev.round >= len(h.rounds) {
			continue // during the final ShipSpool
		}
		refused[ev.round] += ev.fresh
		answered[ev.round] += ev.lines
		if first[ev.round].IsZero() {
			first[ev.round] = ev.at
		}
		last[ev.round] = ev.at
	}
	for i, n := range refused {
		rd := h.rounds[i]
		if rd.end().Sub(first[i]) > 500*time.Millisecond && !strings.Contains(rd.stderr, "400") && !strings.Contains(rd.stderr, "InvalidArgument") {
			h.t.Errorf("%v: the collector refused %d lines for good, and the child said nothing of it on stderr:\n%s", rd, n, rd.stderr)
		}
		s := reportSnap(rd.report)
		if s == nil {
			s = rd.progress.Snap
		}
		if s == nil || rd.report == nil && s.At.Sub(last[i]) < 300*time.Millisecond {
			continue // too close to the kill to have been counted
		}
		if got := s.Failed - s.SpoolLost + s.RecoveredFailed; got < uint64(n) {
			h.t.Errorf("%v: the collector refused %d lines for good; the child counts %d failed (Failed %d + RecoveredFailed %d)", rd, n, got, s.Failed, s.RecoveredFailed)
		}
	}
	// Nothing else fails in a killed child: its outages are far shorter
	// than the OTLP timeout, and a 200, whatever its body, is a delivery. A
	// line refused before a kill and recovered after it is refused again,
	// and counted again.
	for _, rd := range h.rounds {
		// Those lost with a spool file cut under it are counted failed
		// too, and told apart (SpoolLost).
		if s := rd.progress.Snap; s != nil && rd.report == nil && s.Failed-s.SpoolLost+s.RecoveredFailed > uint64(answered[rd.i]) {
			h.t.Errorf("%v: the child counts %d failed (Failed %d, of them %d lost with a spool file, + RecoveredFailed %d), but the collector refused only %d lines; it answered 200 with an empty or JSON body %d times this round; stderr:\n%s",
				rd, s.Failed-s.SpoolLost+s.RecoveredFailed, s.Failed, s.SpoolLost, s.RecoveredFailed, answered[rd.i], rd.odd200, rd.stderr)
		}
	}
}

// checkRecoveryLatency: after each outage (down) the collector came back
// at T; the lines logged in the 200ms from the first one logged after T,
// while it stayed healthy, must arrive within one schedule delay plus one
// retry backoff (the longest the outage can have led to), with slack for
// a loaded machine. The window starts at the first line rather than at T,
// so that a child between bursts at T is still measured.
func (h *faultHarness) checkRecoveryLatency(rd *faultRound) {
	slack := time.Second
	if rd.starved {
		slack = 2 * time.Second
	}
	for k := 0; k+1 < len(rd.phases); k++ {
		down, up := rd.phases[k], rd.phases[k+1]
		if down.Kind != "down" || up.Kind != "up" || up.At.IsZero() {
			continue
		}
		bound := faultScheduleDelay + faultRetryWait(up.At.Sub(down.At)) + slack
		healthyTill := rd.end()
		if k+2 < len(rd.phases) && !rd.phases[k+2].At.IsZero() {
			healthyTill = rd.phases[k+2].At
		}
		h.outages++
		first, ok := h.led.firstLogged(rd.i, up.At, healthyTill)
		if !ok {
			// A killed round's child logs a burst every pause: up for two
			// of them and more, it must have logged, and what it logged
			// arrived, or its call was stuck.
			if long := 2*faultPause(rd.burst) + slack; !rd.killed.IsZero() && healthyTill.Sub(up.At) >= long {
				h.t.Errorf("%v: the collector stayed up %v after an outage, and no line the child logged in that time arrived; its bursts come every %v; %s",
					rd, healthyTill.Sub(up.At).Round(time.Millisecond), faultPause(rd.burst), rd.callState())
			}
			continue
		}
		worst, n, late := h.led.latency(rd.i, first, first.Add(200*time.Millisecond), healthyTill)
		if n+late > 0 {
			h.outagesMeasured++
		}
		if worst > h.worstRecovery {
			h.worstRecovery = worst
			h.worstRecoveryNote = fmt.Sprintf(" (bound %v, %v)", bound, rd)
		}
		// Lines that arrived only after the next fault, or the kill, say
		// nothing unless that came after the bound.
		conclusive := !first.Add(200 * time.Millisecond).Add(bound).After(healthyTill)
		if worst > bound || late > 0 && conclusive {
			h.t.Errorf("%v: after an outage of %v, of the lines logged in the 200ms from the first one after the collector came back, %d took up to %v to arrive and %d arrived only after %v; want each within %v (schedule delay %v + retry backoff %v + slack %v)",
				rd, up.At.Sub(down.At).Round(time.Millisecond), n, worst.Round(time.Millisecond), late, healthyTill.Sub(up.At).Round(time.Millisecond),
				bound, faultScheduleDelay, faultRetryWait(up.At.Sub(down.At)), slack)
		}
	}
}

// faultPause is a child's compute between two bursts of burst lines per
// goroutine: within what the pipeline sends, so that no round overloads
// the queue by design.
func faultPause(burst int) time.Duration {
	return max(300*time.Millisecond, time.Duration(burst)*100*time.Microsecond)
}

func sum(v []uint64) uint64 {
	var n uint64
	for _, x := range v {
		n += x
	}
	return n
}

// The children.

// faultProc is a running child.
type faultProc struct {
	*childproc.Proc
	stderr   *testsupport.LockedBuffer
	progress string
}

func (h *faultHarness) startChild(rd *faultRound, driven bool) *faultProc {
	t := h.t
	progress := filepath.Join(h.work, fmt.Sprintf("progress-%d", rd.i))
	if err := os.WriteFile(progress, make([]byte, progWords*8), 0o600); err != nil {
		t.Fatal(err)
	}
	pause := faultPause(rd.burst) // a rank's burst, then compute
	dir := h.dir
	if rd.dir != "" {
		dir = rd.dir
	}
	cfg := faultChildConfig{Dir: dir, Endpoint: h.endpoint(rd.proto), Proto: rd.proto, Run: rd.i, Goroutines: faultGoroutines,
		Burst: rd.burst, Pause: pause, ScheduleDelay: faultScheduleDelay, BatchSize: faultBatch, Progress: progress, Driven: driven}
	if rd.starved {
		cfg.Spinners = 3
	}
	cmd := childproc.Command("TestFaultHarnessChild", faultChildEnv, cfg)
	if rd.starved {
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	}
	c := &faultProc{stderr: &testsupport.LockedBuffer{}, progress: progress}
	cmd.Stderr = c.stderr
	c.Proc = childproc.Start(t, cmd, func(problem string) string {
		return fmt.Sprintf("%v: %s; stderr:\n%s", rd, problem, c.stderr)
	})
	return c
}

// startSpinners starts a busy process per CPU, for a starved round of the
// long mode.
func (h *faultHarness) startSpinners() {
	for range runtime.NumCPU() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFaultHarnessChild$")
		cmd.Env = append(os.Environ(), faultSpinEnv+"=1", "GOMAXPROCS=1")
		if err := cmd.Start(); err != nil {
			h.t.Fatal(err)
		}
		h.spin = append(h.spin, cmd)
	}
}

func (h *faultHarness) stopSpinners() {
	for _, cmd := range h.spin {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	h.spin = nil
}

// The collector's side.

// faultFront is an OTLP/HTTP front for the receiver that can go down
// (connection refused) and come back on the same port, and can answer 200
// with an empty body and no content type (VictoriaLogs) or with "{}" as
// application/json (some proxies) after the receiver stored the request.
//
// Going down, it closes every connection at once, as a collector's process
// that dies does: a request the receiver behind it has stored gets no
// answer, and its sender, alive, sends it again. The front tells the
// ledger of each such request (cut), by its sender.
type faultFront struct {
	addr    string
	proxy   *httputil.ReverseProxy
	led     *faultLedger
	answer  atomic.Int32 // frontForward, frontEmpty, frontJSON
	emptied atomic.Int64 // answers replaced
	downs   atomic.Int64 // times it went down
	mu      sync.Mutex
	srv     *http.Server
}

func startFaultFront(t *testing.T, target string, led *faultLedger) *faultFront {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f := &faultFront{addr: testsupport.FreeAddr(t), proxy: httputil.NewSingleHostReverseProxy(u), led: led}
	f.proxy.ErrorLog = log.New(io.Discard, "", 0) // a receiver down is a fault of the harness's making
	f.proxy.ModifyResponse = func(resp *http.Response) error {
		a := f.answer.Load()
		if a == frontForward || resp.StatusCode != http.StatusOK {
			return nil
		}
		_ = resp.Body.Close()
		resp.Header.Del("Content-Type")
		resp.Header.Del("Content-Length")
		resp.Body, resp.ContentLength = http.NoBody, 0
		if a == frontJSON {
			resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader("{}")), 2
			resp.Header.Set("Content-Type", "application/json")
		}
		f.emptied.Add(1)
		return nil
	}
	f.up(t)
	t.Cleanup(f.down)
	return f
}

const (
	frontForward = iota
	frontEmpty
	frontJSON
	frontHang // takes requests and answers none while it lasts
)

func (f *faultFront) URL() string { return "http://" + f.addr }

func (f *faultFront) up(t *testing.T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.srv != nil {
		return
	}
	var ln net.Listener
	if !testsupport.Eventually(5*time.Second, func() bool {
		var err error
		ln, err = net.Listen("tcp", f.addr)
		return err == nil
	}) {
		t.Fatalf("front: cannot listen on %s again", f.addr)
	}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second}
	go func(srv *http.Server) { _ = srv.Serve(ln) }(f.srv)
}

// serve forwards a request; one whose answer had not been written out
// when the front went down is cut. (One written just before it may be
// counted cut too: the count bounds what a live sender may send again.)
func (f *faultFront) serve(w http.ResponseWriter, r *http.Request) {
	downs := f.downs.Load()
	if f.answer.Load() == frontHang {
		<-r.Context().Done() // a collector that hangs never answers, nor stores, this request
		return
	}
	f.proxy.ServeHTTP(w, r)
	_ = http.NewResponseController(w).Flush()
	if f.downs.Load() != downs {
		f.led.cut(f.led.sender(map[string]string{faultSenderHeader: r.Header.Get(faultSenderHeader)}))
	}
}

func (f *faultFront) down() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.srv != nil {
		f.downs.Add(1)
		_ = f.srv.Close()
		f.srv = nil
	}
}

// faultLedger is the collector's memory of every harness line: how many
// times it arrived, when it was logged and first arrived, and whether the
// collector refused it. It also decides, as the receiver's consume hook,
// whether to refuse or delay a request.
type faultLedger struct {
	mu      sync.Mutex
	start   time.Time
	round   int // the round under way
	lines   map[[2]int][]faultLine
	slow    time.Duration
	armed   bool
	refused []faultRefusal
	dups    map[faultDupKey]int // copies beyond the first, by their cause
	cuts    map[int]int         // round -> answers its child never got: the front went down under the request
	reqs    []faultRequest      // every request that carried harness lines, in the order they were stored
}

// faultRequest is one stored request, as the ledger saw it: what a
// duplicate's failure message shows of the copies before and after.
type faultRequest struct {
	sender, round int   // its child's round; the round under way when it was stored
	begun, stored int32 // ms since the ledger's start: its arrival, and its storing (after a slow collector's delay)
	lines         map[int]int
	prev          map[[2]int]int // {run, sender charged} -> its lines that are copies beyond the first (see store)
}

// faultLine is one (run, g, seq).
type faultLine struct {
	count   uint16
	refused bool
	sender  int16 // the round whose child sent the copy that arrived latest
	logged  int32 // ms since the ledger's start
	arrived int32 // ms since the ledger's start, first stored
	latest  int32 // ms since the ledger's start, when sender's copy arrived
}

// faultDupKey is the cause of copies of run's lines beyond the first: the
// child whose copy had arrived before, sender, either sent them again
// itself (live: its answer lost when the collector went down), or died
// before it had the answer, and a later child sent them again.
type faultDupKey struct {
	run, sender int
	live        bool
}

// faultSenderHeader names the round whose child sent a request: every
// child sends it (WithHeaders), and the final ShipSpool too. Its value is
// no bare number: header values are redacted from the errors a child
// prints, and "4" would hide the "400" the harness looks for.
const faultSenderHeader = "fault-child"

func faultSender(round int) string { return "fault-round-" + strconv.Itoa(round) }

type faultRefusal struct {
	at     time.Time
	round  int
	fresh  int  // lines refused for the first time
	lines  int  // lines refused, fresh or again
	repeat bool // the request carried a line refused before
}

// faultCopies counts record copies arriving.
type faultCopies struct {
	copies, dupCopies int
	runCopies         map[int]int
}

func (c faultCopies) minus(b faultCopies) faultCopies {
	out := faultCopies{copies: c.copies - b.copies, dupCopies: c.dupCopies - b.dupCopies, runCopies: map[int]int{}}
	for k, v := range c.runCopies {
		out.runCopies[k] = v - b.runCopies[k]
	}
	return out
}

func newFaultLedger() *faultLedger {
	return &faultLedger{start: time.Now(), lines: map[[2]int][]faultLine{}, dups: map[faultDupKey]int{}, cuts: map[int]int{}}
}

func (l *faultLedger) setSlow(d time.Duration) { l.mu.Lock(); l.slow = d; l.mu.Unlock() }
func (l *faultLedger) arm()                    { l.mu.Lock(); l.armed = true; l.mu.Unlock() }
func (l *faultLedger) disarm()                 { l.mu.Lock(); l.armed = false; l.mu.Unlock() }
func (l *faultLedger) setRound(i int)          { l.mu.Lock(); l.round = i; l.mu.Unlock() }
func (l *faultLedger) cut(sender int)          { l.mu.Lock(); l.cuts[sender]++; l.mu.Unlock() }

// sender is the round whose child sent a request, from its header; the
// round under way if it has none.
func (l *faultLedger) sender(md map[string]string) int {
	if n, err := strconv.Atoi(strings.TrimPrefix(md[faultSenderHeader], "fault-round-")); err == nil {
		return n
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.round
}

// duplicates returns the copies beyond the first of run's lines, by cause.
func (l *faultLedger) duplicates(run int) map[faultDupKey]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[faultDupKey]int{}
	for k, n := range l.dups {
		if k.run == run {
			out[k] = n
		}
	}
	return out
}

// cutAnswers is how many answers to round's child the front cut.
func (l *faultLedger) cutAnswers(round int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cuts[round]
}

func (l *faultLedger) refusalLog() []faultRefusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.refused)
}

// line returns the entry of (run, g, seq), growing the table; under mu.
func (l *faultLedger) line(run, g, seq int) *faultLine {
	k := [2]int{run, g}
	s := l.lines[k]
	if seq >= len(s) {
		s = slices.Grow(s, seq+1-len(s))[:seq+1]
		l.lines[k] = s
	}
	return &s[seq]
}

type faultKey struct {
	run, g, seq int
	logged      time.Time
}

// consume is the receiver's hook.
func (l *faultLedger) consume(_ int, md map[string]string, ld plog.Logs) error {
	sender := l.sender(md)
	keys := faultKeys(ld)
	begun, slow, err := l.admit(keys)
	if err != nil {
		return err
	}
	if slow > 0 {
		time.Sleep(slow)
	}
	l.store(sender, begun, keys)
	return nil
}

// faultKeys are the harness lines ld carries.
func faultKeys(ld plog.Logs) []faultKey {
	var keys []faultKey
	for lr := range logRecords(ld) {
		run, ok1 := lr.Attributes().Get("run")
		g, ok2 := lr.Attributes().Get("g")
		seq, ok3 := lr.Attributes().Get("seq")
		if ok1 && ok2 && ok3 && g.Int() >= 0 && g.Int() < faultMaxRoutines && seq.Int() >= 0 && seq.Int() < 1<<30 {
			keys = append(keys, faultKey{int(run.Int()), int(g.Int()), int(seq.Int()), lr.Timestamp().AsTime()})
		}
	}
	return keys
}

// admit decides, as a request arrives, whether the collector refuses it
// (err) or takes slow to store it; begun is when it arrived.
func (l *faultLedger) admit(keys []faultKey) (begun int32, slow time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	repeat := false
	for _, k := range keys {
		if l.line(k.run, k.g, k.seq).refused {
			repeat = true
		}
	}
	if len(keys) > 0 && (l.armed || repeat) {
		// A collector's 400 is the same for the same request: a line it
		// refused once it refuses again.
		ev := faultRefusal{at: time.Now(), round: l.round, lines: len(keys), repeat: repeat}
		for _, k := range keys {
			if ln := l.line(k.run, k.g, k.seq); !ln.refused {
				ln.refused = true
				ev.fresh++
			}
		}
		if !repeat {
			l.armed = false // one fresh refusal per arming
		}
		l.refused = append(l.refused, ev)
		return 0, 0, status.Error(codes.InvalidArgument, "fault harness: this batch is refused")
	}
	return int32(time.Since(l.start).Milliseconds()), l.slow, nil
}

// store counts the lines of a request from sender's child that arrived at
// begun, now that the collector stores them. Each copy beyond a line's
// first is charged to the child whose copy had arrived before it: the copy
// after it was sent because that child had no answer. By arrival, not by
// storing: a slow collector stores a request after its child died, and
// maybe after the next child sent the same lines again and had them stored
// at once; that copy is the dead child's in-flight request, charged to
// its kill, not to the next child's.
func (l *faultLedger) store(sender int, begun int32, keys []faultKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := int32(time.Since(l.start).Milliseconds())
	req := faultRequest{sender: sender, round: l.round, begun: begun, stored: now, lines: map[int]int{}, prev: map[[2]int]int{}}
	for _, k := range keys {
		ln := l.line(k.run, k.g, k.seq)
		req.lines[k.run]++
		switch {
		case ln.count == 0:
			ln.arrived = now
			ln.logged = int32(k.logged.Sub(l.start).Milliseconds())
			ln.sender, ln.latest = int16(sender), begun
		case begun < ln.latest:
			// Stored after a copy that arrived after it: this one was
			// first, and the later copy its sender's doing.
			req.prev[[2]int{k.run, sender}]++
			l.dups[faultDupKey{run: k.run, sender: sender, live: int(ln.sender) == sender}]++
		default:
			req.prev[[2]int{k.run, int(ln.sender)}]++
			l.dups[faultDupKey{run: k.run, sender: int(ln.sender), live: int(ln.sender) == sender}]++
			ln.sender, ln.latest = int16(sender), begun
		}
		if ln.count < 65535 {
			ln.count++
		}
	}
	if len(keys) > 0 {
		l.reqs = append(l.reqs, req)
	}
}

// requestsOf says which requests carried run's lines that sender sent, and
// which carried them again: the story of a duplicate.
func (l *faultLedger) requestsOf(run, sender int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.reqs {
		again := r.prev[[2]int{run, sender}]
		if (r.sender != sender || r.lines[run] == 0) && again == 0 {
			continue
		}
		s := fmt.Sprintf("%d lines by round %d's child at %dms", r.lines[run], r.sender, r.begun)
		if r.stored != r.begun {
			s += fmt.Sprintf(", stored at %dms", r.stored)
		}
		if r.round != r.sender {
			s += fmt.Sprintf(" (round %d)", r.round)
		}
		for k, n := range r.prev {
			if k[0] == run {
				s += fmt.Sprintf(", %d of them copies charged to round %d's child", n, k[1])
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

// missing is how many of run's lines from seq from to logged (per
// goroutine) have neither arrived nor been refused.
func (l *faultLedger) missing(run int, from uint64, logged []uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for g, to := range logged {
		s := l.lines[[2]int{run, g}]
		for seq := from; seq < to; seq++ {
			if seq >= uint64(len(s)) || s[seq].count == 0 && !s[seq].refused {
				n++
			}
		}
	}
	return n
}

// faultTally is what arrived of one run's lines.
type faultTally struct {
	arrived, missing, refused int
	dups, dupLines            int // copies beyond the first; lines with any
	phantom                   int // arrived past what the child logged
	firstMissing              [2]int
}

func (l *faultLedger) tally(run int, logged []uint64) faultTally {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c faultTally
	for g, n := range logged {
		s := l.lines[[2]int{run, g}]
		for seq := range max(len(s), int(n)) {
			var ln faultLine
			if seq < len(s) {
				ln = s[seq]
			}
			switch {
			case ln.count > 0:
				c.arrived++
				if ln.count > 1 {
					c.dups += int(ln.count) - 1
					c.dupLines++
				}
				// The call under way at the kill (seq == n) may have arrived.
				if seq > int(n) {
					c.phantom++
				}
			case ln.refused:
				c.refused++
			case seq < int(n):
				if c.missing == 0 {
					c.firstMissing = [2]int{g, seq}
				}
				c.missing++
			}
		}
	}
	return c
}

// latency is the longest time from logging to first arrival of run's
// lines logged between from and to that arrived by cutoff, and how many of
// them there were; late is how many arrived after cutoff.
func (l *faultLedger) latency(run int, from, to, cutoff time.Time) (worst time.Duration, n, late int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := func(t time.Time) int32 { return int32(t.Sub(l.start).Milliseconds()) }
	lo, hi, cut := ms(from), ms(to), ms(cutoff)
	for g := range faultMaxRoutines {
		for _, ln := range l.lines[[2]int{run, g}] {
			switch {
			case ln.count == 0 || ln.logged < lo || ln.logged > hi:
			case ln.arrived > cut:
				late++
			default:
				n++
				worst = max(worst, time.Duration(ln.arrived-ln.logged)*time.Millisecond)
			}
		}
	}
	return worst, n, late
}

// firstLogged is when the first of run's lines logged from from to
// cutoff was logged, of those that arrived; false if there is none.
func (l *faultLedger) firstLogged(run int, from, cutoff time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lo, hi := int32(from.Sub(l.start).Milliseconds()), int32(cutoff.Sub(l.start).Milliseconds())
	first, found := hi, false
	for g := range faultMaxRoutines {
		for _, ln := range l.lines[[2]int{run, g}] {
			if ln.count > 0 && ln.logged >= lo && ln.logged <= first {
				first, found = ln.logged, true
			}
		}
	}
	return l.start.Add(time.Duration(first) * time.Millisecond), found
}

// copies counts every record copy that arrived so far.
func (l *faultLedger) copies() faultCopies {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := faultCopies{runCopies: map[int]int{}}
	for k, s := range l.lines {
		for _, ln := range s {
			c.copies += int(ln.count)
			c.runCopies[k[0]] += int(ln.count)
			if ln.count > 1 {
				c.dupCopies += int(ln.count) - 1
			}
		}
	}
	return c
}
