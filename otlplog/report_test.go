package otlplog

import (
	"sync"
	"testing"
	"time"
)

// stuckWriter is a loss writer that never returns, as a full pipe or a
// stopped terminal does: entered is closed at the first Write.
type stuckWriter struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newStuckWriter(t *testing.T) *stuckWriter {
	w := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(w.release) })
	return w
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return len(p), nil
}

// A loss writer that blocks forever holds up no export: with the
// collector down, the first failure's warning is written (and never
// returns); once the collector is up, every line logged after it arrives.
func TestStuckLossWriterDoesNotStopExports(t *testing.T) {
	cleanEnv(t)
	addr := freeAddr(t)
	w := newStuckWriter(t)
	p := newTestProvider(t, WithEndpoint("http://"+addr), WithLossWriter(w),
		WithScheduleDelay(10*time.Millisecond), WithOTLPTimeout(2*time.Second))
	defer shutdownWithin(p, 100*time.Millisecond)
	emit(p, 1)
	select {
	case <-w.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no warning written within 5 s of a failed export")
	}
	srv := startOTLPServer(t, addr)
	time.Sleep(50 * time.Millisecond)
	emit(p, 100)
	if got := srv.WaitRecords(100, 10*time.Second); got < 100 {
		t.Fatalf("%d of the 100 records logged after the collector came back were delivered; stats %v", got, p.Stats())
	}
}

// Lines to a stuck writer beyond the queue's bound are dropped and
// counted, never waited for: warning after warning returns at once.
func TestStuckLossWriterDropsLinesBeyondBound(t *testing.T) {
	cleanEnv(t)
	w := newStuckWriter(t)
	p := newTestProvider(t, withDiscardExport(), WithLossWriter(w))
	defer shutdownWithin(p, 50*time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 * maxQueuedLines {
			p.reporter.say("zaplens: a line")
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("say blocked on a stuck writer")
	}
	if n := p.reporter.droppedLines.Load(); n < 8*maxQueuedLines {
		t.Errorf("%d lines counted dropped, want at least %d", n, 8*maxQueuedLines)
	}
}
