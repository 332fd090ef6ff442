package otlplog

import (
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
)

// spooledForOutage is a provider with the spool on, exporting to addr,
// where no collector listens yet, and its logger.
func spooledForOutage(t *testing.T, addr, service string, opts ...Option) (*LoggerProvider, *zap.Logger) {
	t.Helper()
	cleanEnv(t)
	p := newTestProvider(t, append([]Option{WithEndpoint("http://" + addr), WithSpool(t.TempDir()),
		WithServiceName(service), WithScheduleDelay(50 * time.Millisecond)}, opts...)...)
	t.Cleanup(func() { _ = shutdownWithin(p, 5*time.Second) })
	return p, zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
}

// checkEveryLineOnce fails unless each of the n lines of service that p
// logged arrived once, and p counts them all delivered.
func checkEveryLineOnce(t *testing.T, p *LoggerProvider, srv *otlpServer, service string, n int) {
	t.Helper()
	if !eventually(30*time.Second, func() bool { return p.Stats().Exported >= uint64(n) }) {
		t.Errorf("after the collector came back: %v", p.Stats())
	}
	if dups := checkAll(t, deliveries(srv), service, n); dups != 0 {
		t.Errorf("%d lines arrived twice or more", dups)
	}
	if s := p.Stats(); s.Emitted != uint64(n) || s.Exported != uint64(n) || s.Lost() != 0 || s.Queued != 0 {
		t.Errorf("stats %v: want all %d lines delivered, none lost", s, n)
	}
	if got := srv.Records.Load(); got != int64(n) {
		t.Errorf("the collector holds %d records, want %d", got, n)
	}
}

// With the spool on, a queue that fills while the collector is down loses
// nothing: what does not fit in memory waits in the spool's files, where
// it is already, and the live process sends every line, once, when the
// collector is back. Without the spool's overflow the queue turned lines
// away, and the export waiting to retry gave way.
func TestSpooledQueueFillsDuringOutage(t *testing.T) {
	addr := freeAddr(t)
	p, l := spooledForOutage(t, addr, "overflow", WithQueueBytes(64<<10), WithBatchSize(500))
	const lines = 20000 // 2 MiB: thirty times the queue
	for i := range lines {
		l.Info("line " + strconv.Itoa(i))
	}
	if s := p.Stats(); s.Lost() != 0 || s.Queued != lines {
		t.Fatalf("during the outage, stats %v: want all %d lines queued, none lost", s, lines)
	}
	srv := startOTLPServer(t, addr, keepRecords())
	checkEveryLineOnce(t, p, srv, "overflow", lines)
}

// A live process sends its own failed exports once the collector is back:
// an export that no collector answered for within the retry bound is not
// counted failed and left for the next start; its records wait in the
// spool, and this process sends them, each once, with those logged since.
func TestLiveProcessResendsFailedExports(t *testing.T) {
	addr := freeAddr(t)
	p, l := spooledForOutage(t, addr, "resend", WithRetryMaxElapsed(200*time.Millisecond),
		WithOTLPTimeout(100*time.Millisecond), WithBatchSize(100))
	for i := range 300 {
		l.Info("line " + strconv.Itoa(i))
	}
	// Exports fail meanwhile, each after the retry bound.
	if !eventually(10*time.Second, func() bool { _, err := p.pipe.LastFailure(); return err != nil }) {
		t.Fatal("no export failed with the collector down")
	}
	time.Sleep(500 * time.Millisecond) // a few more fail
	for i := 300; i < 500; i++ {
		l.Info("line " + strconv.Itoa(i))
	}
	if s := p.Stats(); s.Lost() != 0 || s.Queued != 500 {
		t.Fatalf("during the outage, stats %v: want all 500 lines queued, none failed", s)
	}
	srv := startOTLPServer(t, addr, keepRecords())
	checkEveryLineOnce(t, p, srv, "resend", 500)
}
