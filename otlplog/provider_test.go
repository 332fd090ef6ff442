package otlplog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
)

// emit sends n records with four attributes through the OTel logs API, as
// the bridge does.
func emit(p log.LoggerProvider, n int) {
	l := p.Logger("test")
	var r log.Record
	for i := range n {
		r = log.Record{}
		r.SetTimestamp(time.Now())
		r.SetSeverity(log.SeverityInfo)
		r.SetBody(attribute.StringValue("step done"))
		r.AddAttributes(attribute.Int("i", i), attribute.Int("step", i/10000), attribute.Float64("loss", 0.41), attribute.String("phase", "train"))
		l.Emit(context.Background(), r)
	}
}

func checkSum(t *testing.T, s Stats) {
	t.Helper()
	if s.Emitted != s.Exported+s.Dropped+s.Failed+s.Queued || s.Queued > s.Emitted {
		t.Errorf("counts do not add up: %v", s)
	}
}

func newTestProvider(t *testing.T, opts ...Option) *LoggerProvider {
	t.Helper()
	p, err := NewLoggerProvider(context.Background(), append([]Option{WithLossWriter(nil)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProviderDeliversAndCounts(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp))
	emit(p, 5000)
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	if s != (Stats{Emitted: 5000, Exported: 5000}) || exp.Len() != 5000 {
		t.Errorf("stats %v, exporter has %d", s, exp.Len())
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after full delivery: %v", err)
	}
}

func TestProviderDropsWhenFullWithoutWaiting(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	p := newTestProvider(t, withExporter(exp), WithQueueSize(100), WithBatchSize(10))
	start := time.Now()
	emit(p, 1000)
	if d := time.Since(start); d > time.Second {
		t.Errorf("emitting into a full queue took %v", d)
	}
	s := p.Stats()
	checkSum(t, s)
	if s.Emitted != 1000 || s.Dropped != 900 || s.Queued != 100 {
		t.Errorf("stats %v, want 900 dropped and 100 queued", s)
	}
	close(exp.Block)
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = p.Stats()
	checkSum(t, s)
	if s.Exported != 100 || s.Queued != 0 {
		t.Errorf("after flush: %v", s)
	}
	var de *DeliveryError
	err := p.Shutdown(context.Background())
	if !errors.As(err, &de) || de.Stats.Dropped != 900 {
		t.Errorf("Shutdown error %v, want a DeliveryError with 900 dropped", err)
	}
}

func TestProviderCountsFailures(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Fail: errors.New("collector says no")}
	// A batch larger than the records and a long delay: all fail in the flush.
	p := newTestProvider(t, withExporter(exp), WithBatchSize(1000), WithScheduleDelay(time.Hour))
	emit(p, 250)
	err := p.ForceFlush(context.Background())
	if err == nil || !strings.Contains(err.Error(), "250 log records failed") {
		t.Errorf("ForceFlush error %v", err)
	}
	s := p.Stats()
	checkSum(t, s)
	if s.Failed != 250 {
		t.Errorf("stats %v, want 250 failed", s)
	}
}

func TestBlockOnFullWaitsBounded(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	p := newTestProvider(t, withExporter(exp), WithQueueSize(10), WithBatchSize(10), WithBlockOnFull(50*time.Millisecond))
	emit(p, 10)
	start := time.Now()
	emit(p, 2) // no room: each waits its bound, then is dropped
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("two blocked emits took %v, want about 100ms", d)
	}
	if s := p.Stats(); s.Dropped != 2 {
		t.Errorf("stats %v, want 2 dropped", s)
	}
	// Released while a caller waits: the caller gets the room, nothing is dropped.
	go func() { time.Sleep(10 * time.Millisecond); close(exp.Block) }()
	p2 := newTestProvider(t, withExporter(&memExporter{}), WithQueueSize(10), WithBatchSize(5), WithBlockOnFull(5*time.Second))
	emit(p2, 2000)
	if s := p2.Stats(); s.Dropped != 0 {
		t.Errorf("with a bounded wait and a draining exporter: %v", s)
	}
	_ = p.Shutdown(context.Background())
	_ = p2.Shutdown(context.Background())
}

func TestShutdownKeepsDeadlineAndReportsUnsent(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})} // a collector that never answers
	defer close(exp.Block)
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), withExporter(exp), WithLossWriter(&buf), WithBatchSize(100))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 1000)
	late := p.Logger("late") // a logger the bridge cached before Shutdown
	start := time.Now()
	err = shutdownWithin(p, 300*time.Millisecond)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Shutdown took %v with a 300ms deadline", d)
	}
	var de *DeliveryError
	if !errors.As(err, &de) || de.Stats.Queued+de.Stats.Failed != 1000 {
		t.Fatalf("Shutdown error %v, want 1000 undelivered", err)
	}
	// The batch in flight when the deadline passed may have failed by
	// then (its export canceled) or still be counted queued: both are
	// true, and the message says which.
	if !strings.Contains(err.Error(), "1000 of 1000 log records were not delivered") ||
		!strings.Contains(err.Error(), fmt.Sprintf("%d still queued at shutdown", de.Stats.Queued)) {
		t.Errorf("message %q, stats %+v", err, de.Stats)
	}
	// One story: the last line of the report is the error's tally, word
	// for word; the error may add the last export's cause after it.
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if last, msg := lines[len(lines)-1], err.Error(); msg != last && !strings.HasPrefix(msg, last+"; last export error") {
		t.Errorf("final report %q, error %q", last, msg)
	}
	// After Shutdown loggers are disabled, so the bridge emits nothing more.
	if late.Enabled(context.Background(), log.EnabledParameters{}) {
		t.Error("logger enabled after Shutdown")
	}
	late.Emit(context.Background(), log.Record{}) // no panic, and not emitted
	if s := p.Stats(); s.Emitted != 1000 {
		t.Errorf("after shutdown: %v", s)
	}
}

func TestLossReportOncePerInterval(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	var mu sync.Mutex
	var reports []Loss
	p, err := NewLoggerProvider(context.Background(), withExporter(exp), WithQueueSize(10), WithBatchSize(10),
		WithLossReport(50*time.Millisecond, func(l Loss) { mu.Lock(); reports = append(reports, l); mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 5000)
	time.Sleep(200 * time.Millisecond) // the last intervals have no loss, so no report
	mu.Lock()
	got := append([]Loss(nil), reports...)
	mu.Unlock()
	var dropped uint64
	for _, l := range got {
		dropped += l.Dropped
		if l.Dropped == 0 || l.Final {
			t.Errorf("report %v", l)
		}
	}
	if dropped != 4990 || len(got) > 5 {
		t.Fatalf("%d reports, %d dropped in all, want 4990: %v", len(got), dropped, got)
	}
	if last := got[len(got)-1]; !strings.Contains(last.String(), "dropped 4990") {
		t.Errorf("line %q", last)
	}
	close(exp.Block)
	_ = p.Shutdown(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if n := len(reports); n != len(got)+1 || !reports[n-1].Final || reports[n-1].Totals.Dropped != 4990 {
		t.Errorf("final report missing or wrong: %+v", reports)
	}
}

func TestNoLossNoReport(t *testing.T) {
	cleanEnv(t)
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), withExporter(&memExporter{}),
		WithLossWriter(&buf), WithLossReport(10*time.Millisecond, nil))
	if err != nil {
		t.Fatal(err)
	}
	emit(p, 100)
	time.Sleep(50 * time.Millisecond)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
	if buf.String() != "" {
		t.Errorf("report without loss: %q", buf.String())
	}
}

func TestConcurrentEmitCountsAddUp(t *testing.T) {
	cleanEnv(t)
	p := newTestProvider(t, withExporter(&memExporter{}), WithQueueSize(500), WithBatchSize(100))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { emit(p, 5000) })
	}
	stop := make(chan struct{})
	go func() { // Stats read while records move must still add up
		for {
			select {
			case <-stop:
				return
			default:
				checkSum(t, p.Stats())
			}
		}
	}()
	wg.Wait()
	close(stop)
	_ = p.Shutdown(context.Background())
	s := p.Stats()
	checkSum(t, s)
	if s.Emitted != 40000 || s.Queued != 0 {
		t.Errorf("stats %v", s)
	}
}

var logEnabledInfo = log.EnabledParameters{Severity: log.SeverityInfo}

// A flush cut short by its deadline must not leave records uncounted nor
// shrink the queue: they are exported or failed later, in the background.
func TestForceFlushDeadlineLosesNoCount(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	p := newTestProvider(t, withExporter(exp), WithQueueSize(100), WithBatchSize(10), WithScheduleDelay(time.Hour))
	emit(p, 25) // three chunks: with the SDK's deadline, two would be forgotten
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		if err := p.ForceFlush(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ForceFlush with a blocked exporter: %v", err)
		}
		cancel()
	}
	close(exp.Block)
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	emit(p, 100) // the whole queue is free again
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s != (Stats{Emitted: 125, Exported: 125}) {
		t.Errorf("stats %v", s)
	}
	_ = p.Shutdown(context.Background())
}
