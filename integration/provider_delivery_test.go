package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// Delivery by the provider against the Collector's receiver: bursts in
// full, counts that add up, a collector that comes up late, a Shutdown
// with the collector down, and the bounded-wait policy.

// provCheckSum fails unless the counts add up and match the receiver's
// distinct lines, in order within each scope.
func provCheckSum(t *testing.T, st otlplog.Stats, r *Receiver) {
	t.Helper()
	if st.Emitted != st.Exported+st.Dropped+st.Failed+st.Queued {
		t.Errorf("counts do not add up: %s", st)
	}
	if distinct, _ := e2eDistinct(t, r.Records()); uint64(distinct) != st.Exported {
		t.Errorf("receiver has %d distinct lines (%d in all), provider counted %d exported", distinct, r.Count(), st.Exported)
	}
}

// Busy-rank steps, each followed by compute until the queue has drained:
// with the defaults every step fits the queue, so nothing may be lost,
// however slow the machine (or the race detector) makes the exporter.
func TestProviderBurstsDeliveredInFull(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t)
	p, _ := e2eProvider(t, r)
	l := e2eLogger(p, e2eDiscard{})
	const steps = 3
	for step := range steps {
		e2eRankFrom(step*e2ePerStep, []*zap.Logger{l.Named("burst")}, 1, e2ePerStep, 0)
		if !testsupport.Eventually(20*time.Second, func() bool { return p.Stats().Queued == 0 }) {
			t.Fatalf("step %d did not drain: %s", step, p.Stats())
		}
	}
	r.WaitForCount(t, steps*e2ePerStep, 5*time.Second)
	st := p.Stats()
	provCheckSum(t, st, r)
	if st.Exported != steps*e2ePerStep || st.Lost() != 0 {
		t.Errorf("stats %s, want all %d exported", st, steps*e2ePerStep)
	}
}

// The collector is down when the program starts and comes up a second
// later: what the queue holds meanwhile is delivered, nothing lost.
func TestProviderCollectorDownThenUp(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t, Stopped())
	p, losses := e2eProvider(t, r)
	provLog(p, 5000)
	time.Sleep(time.Second)
	r.Start(t)
	if !r.WaitForCount(t, 5000, 20*time.Second) {
		t.Errorf("received %d of 5000 after the collector came up; stats %s", r.Count(), p.Stats())
	}
	// The receiver stores a batch before it answers; the provider counts it
	// exported once the answer is in.
	testsupport.Eventually(5*time.Second, func() bool { return p.Stats().Queued == 0 })
	st := p.Stats()
	provCheckSum(t, st, r)
	// The first failed attempt is told at once (a warning, not a loss);
	// no loss may be reported.
	if st.Lost() != 0 || strings.Contains(losses.String(), "lost") || strings.Contains(losses.String(), "not delivered") {
		t.Errorf("stats %s, loss report %q", st, losses.String())
	}
}

// Shutdown keeps its deadline with the collector down and says what it
// could not deliver, in its error and in the final loss report.
func TestProviderShutdownCollectorDown(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t, Stopped())
	p, losses := e2eProvider(t, r)
	provLog(p, 1000)
	took, err := e2eShutdown(t, p, time.Second)
	if took > 1500*time.Millisecond {
		t.Errorf("Shutdown took %v with a 1s deadline", took)
	}
	var de *otlplog.DeliveryError
	if !errors.As(err, &de) || de.Stats.Emitted != 1000 || de.Stats.Exported != 0 {
		t.Fatalf("Shutdown error %v, want a DeliveryError for 1000 records", err)
	}
	if !strings.Contains(err.Error(), "1000 of 1000 log records") || !strings.Contains(err.Error(), "not delivered") {
		t.Errorf("message %q", err)
	}
	if !strings.Contains(losses.String(), "1000 of 1000 log records were not delivered") {
		t.Errorf("final report %q", losses.String())
	}
	provCheckSum(t, p.Stats(), r)
}

// Overload with the bounded wait: the loop slows down instead of dropping,
// and everything arrives.
func TestProviderBlockOnFull(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t)
	p, _ := e2eProvider(t, r, otlplog.WithBlockOnFull(5*time.Second))
	l := e2eLogger(p, e2eDiscard{})
	start := time.Now()
	e2eRank([]*zap.Logger{l.Named("blocking")}, 1, 10*e2ePerStep, 0)
	logged := time.Since(start)
	if _, err := e2eShutdown(t, p, 30*time.Second); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	st := p.Stats()
	t.Logf("%d lines back to back with WithBlockOnFull(5s): logged in %v; stats %s", 10*e2ePerStep, logged.Round(time.Millisecond), st)
	provCheckSum(t, st, r)
	if st.Dropped != 0 || st.Exported != 10*e2ePerStep {
		t.Errorf("stats %s, want all delivered", st)
	}
}

// Stats read while records move always add up.
func TestProviderStatsAddUpUnderLoad(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t)
	p, _ := e2eProvider(t, r, otlplog.WithQueueSize(2000))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if st := p.Stats(); st.Emitted != st.Exported+st.Dropped+st.Failed+st.Queued {
				t.Errorf("counts do not add up: %s", st)
				return
			}
		}
	}()
	provLog(p, 50000/raceScale)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = p.ForceFlush(ctx)
	close(stop)
	<-done
	st := p.Stats()
	provCheckSum(t, st, r)
	if st.Queued != 0 || st.Emitted != 50000/raceScale {
		t.Errorf("stats %s", st)
	}
}
