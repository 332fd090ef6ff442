//go:build linux || darwin

package integration

// The fault harness's accounting of duplicates (issue 36): each copy
// beyond the first is charged to its cause, the kill of the child that
// had sent it before, or an answer the collector's outage cut from a live
// child.

import (
	"context"
	"io"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// faultLogs is a request of run's lines g, seq from to from+n.
func faultLogs(run, g, from, n int) plog.Logs {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for seq := from; seq < from+n; seq++ {
		lr := lrs.AppendEmpty()
		lr.Attributes().PutInt("run", int64(run))
		lr.Attributes().PutInt("g", int64(g))
		lr.Attributes().PutInt("seq", int64(seq))
	}
	return ld
}

func sentBy(round int) map[string]string {
	return map[string]string{faultSenderHeader: faultSender(round)}
}

// Issue 36's round 31: its child's last request (800 lines) arrived and
// the child was killed before the answer; round 32's child recovered it,
// sent it to a slow collector that stored it, and was killed before the
// answer too; round 33's child sent it a third time. Two kills, each
// with one request of these lines in flight: within the promise. The old
// accounting charged both copies to round 31's kill alone.
func TestFaultLedgerChargesEachKill(t *testing.T) {
	h := &faultHarness{led: newFaultLedger()}
	for i := range 4 {
		rd := &faultRound{i: i}
		if i < 3 {
			rd.killed = time.Now()
		}
		h.rounds = append(h.rounds, rd)
	}
	for sender := range 3 {
		if err := h.led.consume(1, sentBy(sender), faultLogs(0, 0, 0, 800)); err != nil {
			t.Fatal(err)
		}
	}
	v := h.dupCauses(0)
	if len(v.problems) > 0 || v.kill != 1600 || v.flap != 0 || v.mostPerKill != 800 {
		t.Errorf("800 lines sent by three children, the first two killed: %+v; want 1600 copies after kills, 800 at most per kill, no problem", v)
	}

	// A kill costs one request, no more.
	if err := h.led.consume(1, sentBy(2), faultLogs(1, 0, 0, faultBatch+1)); err != nil {
		t.Fatal(err)
	}
	if err := h.led.consume(1, sentBy(3), faultLogs(1, 0, 0, faultBatch+1)); err != nil {
		t.Fatal(err)
	}
	if v := h.dupCauses(1); len(v.problems) != 1 {
		t.Errorf("%d lines sent again after one kill: %+v; want one problem", faultBatch+1, v)
	}
	// A child that lived sends nothing twice, unless an answer was cut.
	if err := h.led.consume(1, sentBy(3), faultLogs(3, 0, 0, 10)); err != nil {
		t.Fatal(err)
	}
	if err := h.led.consume(1, sentBy(3), faultLogs(3, 0, 0, 10)); err != nil {
		t.Fatal(err)
	}
	if v := h.dupCauses(3); len(v.problems) != 1 || v.flap != 10 {
		t.Errorf("10 lines sent twice by a child whose answers none cut: %+v; want one problem", v)
	}
	h.led.cut(3)
	if v := h.dupCauses(3); len(v.problems) != 0 || v.flap != 10 {
		t.Errorf("10 lines sent twice by a child one of whose answers was cut: %+v; want 10 counted apart, no problem", v)
	}
	// Nor does a process started after a clean end send its lines again.
	if err := h.led.consume(1, sentBy(4), faultLogs(3, 0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if v := h.dupCauses(3); len(v.problems) != 1 {
		t.Errorf("a line the final child sent, sent again by the ShipSpool after it: %+v; want one problem", v)
	}
}

// The failure of long runs at 75ae95c (seed 1796533102372430421, rounds
// 56-57 and 93-95): round 1's child sent run 0's lines [0, 1024) to a slow
// collector and was killed before the answer; round 2's child recovered
// them and sent them again, stored at once, before the slow collector
// stored round 1's copy. Round 2's child then sent [1024, 2048), and was
// killed before the answer; round 3's child sent those again. Each kill
// cost one request; charged by the order the copies were stored, round
// 2's kill had cost two.
func TestFaultLedgerChargesByArrival(t *testing.T) {
	h := &faultHarness{led: newFaultLedger()}
	for i := range 4 {
		rd := &faultRound{i: i}
		if i < 3 {
			rd.killed = time.Now()
		}
		h.rounds = append(h.rounds, rd)
	}
	first, second := faultKeys(faultLogs(0, 0, 0, faultBatch)), faultKeys(faultLogs(0, 0, faultBatch, faultBatch))
	h.led.store(2, 200, first)  // round 2's copy, stored at once
	h.led.store(1, 100, first)  // round 1's, which had arrived before it, stored after it
	h.led.store(2, 300, second) // round 2's in-flight request at its kill
	h.led.store(3, 400, second)
	v := h.dupCauses(0)
	if len(v.problems) > 0 || v.kill != 2*faultBatch || v.flap != 0 || v.mostPerKill != faultBatch {
		t.Errorf("two kills, each with one request in flight, the first request stored late: %+v; want %d copies after kills, %d at most per kill, no problem",
			v, 2*faultBatch, faultBatch)
	}
	if d := h.led.duplicates(0); d[faultDupKey{run: 0, sender: 1}] != faultBatch || d[faultDupKey{run: 0, sender: 2}] != faultBatch {
		t.Errorf("copies by cause %v; want %d charged to round 1's kill, %d to round 2's", d, faultBatch, faultBatch)
	}

	// A live child's copy stored after the same child's copy sent again:
	// still the child's own, counted apart.
	third := faultKeys(faultLogs(0, 1, 0, 10))
	h.led.store(3, 600, third)
	h.led.store(3, 500, third)
	if v := h.dupCauses(0); v.flap != 10 {
		t.Errorf("a live child's copy stored after its own copy sent again: %+v; want 10 counted as the live child's", v)
	}
}

// A collector that stores a request and goes down before it answers gets
// it again from the live process: OTLP delivers at least once. The
// harness's front, going down under a request the receiver is storing
// (slowly), cuts the answer; the provider sends the lines again, and the
// ledger counts the copies as the outage's, not a kill's.
func TestFaultFrontCutDuplicatesLiveSender(t *testing.T) {
	led := newFaultLedger()
	r := StartReceiver(t, WithConsumeHookMetadata(led.consume))
	front := startFaultFront(t, r.HTTPURL(), led)
	h := &faultHarness{led: led, rounds: []*faultRound{{i: 0}}}

	ctx := context.Background()
	p, err := otlplog.NewLoggerProvider(ctx, otlplog.WithEndpoint(front.URL()), otlplog.WithProtocol(string(HTTP)),
		otlplog.WithScheduleDelay(50*time.Millisecond), otlplog.WithLossWriter(io.Discard), otlplog.WithHeaders(sentBy(0)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(ctx) }()
	led.setSlow(time.Second)
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	const lines = 10
	for seq := range lines {
		logger.Info("fault harness line", zap.Int("run", 0), zap.Int("g", 0), zap.Int("seq", seq))
	}
	if !testsupport.Eventually(5*time.Second, func() bool { return r.Exports() >= 1 }) {
		t.Fatal("the request never reached the receiver")
	}
	led.setSlow(0)
	front.down() // while the receiver stores the request, slowly
	front.up(t)
	if !testsupport.Eventually(5*time.Second, func() bool { return led.copies().copies >= 2*lines }) {
		t.Fatalf("%d copies arrived of %d lines; want each twice: the stored request, and the same sent again (stats %+v)", led.copies().copies, lines, p.Stats())
	}
	v := h.dupCauses(0)
	if cut := led.cutAnswers(0); cut != 1 || v.flap != lines || v.kill != 0 || len(v.problems) > 0 {
		t.Errorf("a request stored and its answer cut, sent again by the live process: %d answers cut, %+v; want 1 cut, %d copies counted apart, none after a kill, no problem",
			cut, v, lines)
	}
}
