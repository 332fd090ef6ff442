package zaplens

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
)

// shutExporter blocks exports until release is closed and records its
// Shutdown.
type shutExporter struct {
	memExporter
	shut atomic.Bool
}

func (e *shutExporter) Shutdown(context.Context) error { e.shut.Store(true); return nil }

// eventually polls cond for up to d.
func eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// A flush cut short by its caller (a bridge's Sync) goes on in the
// background; a Shutdown after it still stops the pipeline, once the
// stuck export gives up.
func TestShutdownAfterTimedOutFlush(t *testing.T) {
	cleanEnv(t)
	exp := &shutExporter{memExporter: memExporter{block: make(chan struct{})}}
	p := newTestProvider(t, WithExporter(exp), WithExportTimeout(300*time.Millisecond))
	emit(p, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	_ = p.ForceFlush(ctx)
	cancel()
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_ = p.Shutdown(ctx)
	if !p.gate.stopped.Load() {
		t.Error("the gate still admits records after Shutdown")
	}
	if !eventually(3*time.Second, exp.shut.Load) {
		t.Error("the exporter was never shut down")
	}
}

// A logging call waiting for room under WithBlockOnFull is released by
// Shutdown, and its record counted as dropped.
func TestShutdownReleasesWaitingCall(t *testing.T) {
	cleanEnv(t)
	exp := &shutExporter{memExporter: memExporter{block: make(chan struct{})}}
	defer close(exp.block)
	p := newTestProvider(t, WithExporter(exp), WithQueueSize(10), WithBatchSize(10), WithBlockOnFull(10*time.Second))
	emit(p, 10)
	released := make(chan time.Duration)
	go func() {
		start := time.Now()
		emit(p, 1)
		released <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_ = p.Shutdown(ctx)
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
	exp := &memExporter{fail: context.Canceled}
	p := newTestProvider(t, WithExporter(exp), WithLossReport(time.Hour, func(Loss) { time.Sleep(3 * time.Second) }))
	emit(p, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_ = p.Shutdown(ctx)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Shutdown with a 200ms deadline took %v", d)
	}
}

// A header value gRPC would refuse on every export is refused at start, by
// key, its value not shown.
func TestHeaderValueNotPrintable(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%0As3cret")
	_, err := NewLoggerProvider(context.Background(), WithLossWriter(nil))
	if err == nil || !strings.Contains(err.Error(), "authorization") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error %v: want one naming the key and hiding the value", err)
	}
	cleanEnv(t)
	_, err = NewLoggerProvider(context.Background(), WithLossWriter(nil), WithHeaders(map[string]string{"x-token": "a\x00b"}))
	if err == nil || !strings.Contains(err.Error(), "x-token") {
		t.Errorf("WithHeaders: error %v", err)
	}
}

// NewLoggerProvider leaves key de-duplication to the bridge, which emits
// unique keys; WithKeyDeduplication gives it back to the SDK, for records
// from other emitters.
func TestKeyDeduplicationOption(t *testing.T) {
	for _, tc := range []struct {
		opts []ProviderOption
		want int
	}{{nil, 2}, {[]ProviderOption{WithKeyDeduplication()}, 1}} {
		cleanEnv(t)
		exp := &memExporter{}
		p := newTestProvider(t, append(tc.opts, WithExporter(exp))...)
		var r log.Record
		r.AddAttributes(attribute.Int("k", 1), attribute.Int("k", 2))
		p.Logger("other").Emit(context.Background(), r)
		_ = p.Shutdown(context.Background())
		if exp.len() != 1 || exp.records[0].AttributesLen() != tc.want {
			t.Errorf("options %d: %d records, attributes %d, want %d", len(tc.opts), exp.len(), exp.records[0].AttributesLen(), tc.want)
		}
	}
}
