package otlplog

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
)

// A flush cut short by its caller (a bridge's Sync) goes on in the
// background; a Shutdown after it still stops the pipeline, once the
// stuck export gives up, and later records are not taken.
func TestShutdownAfterTimedOutFlush(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	defer close(exp.Block)
	p := newTestProvider(t, withExporter(exp), WithExportTimeout(300*time.Millisecond))
	emit(p, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_ = p.ForceFlush(ctx)
	cancel()
	_ = shutdownWithin(p, 200*time.Millisecond)
	emit(p, 1)
	if s := p.Stats(); s.Emitted != 10 {
		t.Errorf("stats %v: want the record after Shutdown not taken", s)
	}
	if !eventually(3*time.Second, func() bool { return p.Stats().Queued == 0 }) {
		t.Errorf("the stuck export never settled: %v", p.Stats())
	}
}

// A logging call waiting for room under WithBlockOnFull is released by
// Shutdown, and its record counted as dropped.
func TestShutdownReleasesWaitingCall(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	defer close(exp.Block)
	p := newTestProvider(t, withExporter(exp), WithQueueSize(10), WithBatchSize(10), WithBlockOnFull(10*time.Second))
	emit(p, 10)
	released := make(chan time.Duration)
	go func() {
		start := time.Now()
		emit(p, 1)
		released <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond)
	_ = shutdownWithin(p, 200*time.Millisecond)
	select {
	case d := <-released:
		if d > 2*time.Second {
			t.Errorf("the waiting call was released after %v", d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the waiting call was not released")
	}
	if s := p.Stats(); s.Dropped != 1 {
		t.Errorf("stats %v, want the waiting call's record dropped", s)
	}
}

// A slow loss report does not hold Shutdown past its deadline.
func TestShutdownDoesNotWaitForSlowReport(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Fail: context.Canceled}
	p := newTestProvider(t, withExporter(exp), WithLossReport(time.Hour, func(Loss) { time.Sleep(3 * time.Second) }))
	emit(p, 10)
	start := time.Now()
	_ = shutdownWithin(p, 200*time.Millisecond)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Shutdown with a 200ms deadline took %v", d)
	}
}

// A header value gRPC would refuse on every export is refused at start, by
// key, its value not shown: from the environment with a warning, the
// headers ignored; from WithHeaders with an error.
func TestHeaderValueNotPrintable(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%0As3cret")
	var buf lockedBuffer
	p, err := NewLoggerProvider(context.Background(), WithLossWriter(&buf))
	_ = p.Shutdown(context.Background())
	if w := buf.String(); err != nil || !strings.Contains(w, `header "authorization"`) || strings.Contains(w, "s3cret") {
		t.Errorf("error %v, warning %q: want a warning naming the key and hiding the value", err, w)
	}
	cleanEnv(t)
	_, err = NewLoggerProvider(context.Background(), WithLossWriter(nil), WithHeaders(map[string]string{"x-token": "a\x00b"}))
	if err == nil || !strings.Contains(err.Error(), "x-token") {
		t.Errorf("WithHeaders: error %v", err)
	}
}

// Records other code emits get unique keys at every level, the last
// value at the first's place, as the SDK gives them.
func TestEmitDeduplicatesKeys(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp))
	var r log.Record
	r.AddAttributes(attribute.Int("k", 1), attribute.Int("k", 2),
		attribute.KeyValue{Key: "m", Value: attribute.MapValue(attribute.Int("a", 1), attribute.Int("a", 3))})
	p.Logger("other").Emit(context.Background(), r)
	_ = p.Shutdown(context.Background())
	if exp.Len() != 1 {
		t.Fatalf("%d records", exp.Len())
	}
	attrs := exp.Records[0].Attributes
	if len(attrs) != 2 || attrs[0].Value.GetIntValue() != 2 || len(attrs[1].Value.GetKvlistValue().GetValues()) != 1 ||
		attrs[1].Value.GetKvlistValue().Values[0].Value.GetIntValue() != 3 {
		t.Errorf("attributes %v", attrs)
	}
}

// A second Shutdown, while the first runs, returns by its own deadline.
func TestSecondShutdownKeepsItsOwnDeadline(t *testing.T) {
	cleanEnv(t)
	exp := &memExporter{Block: make(chan struct{})}
	defer close(exp.Block)
	p := newTestProvider(t, withExporter(exp))
	emit(p, 10)
	go func() { _ = shutdownWithin(p, 3*time.Second) }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if err := shutdownWithin(p, 100*time.Millisecond); err == nil {
		t.Error("the second Shutdown reported success while the first still ran")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the second Shutdown took %v with a 100ms deadline", d)
	}
}
