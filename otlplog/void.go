package otlplog

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
)

// voidTellInterval is the least time between two tellings that a void
// provider drops what it is given: often enough to be seen in a log that
// scrolls, rarely enough not to flood it. A variable, for tests.
var voidTellInterval = time.Minute

// void is why a provider cannot ship, by a configuration that makes
// shipping impossible: it counts the records it is given, all dropped, and
// tells the cause again while they keep coming, so that a program that
// ignored NewLoggerProvider's error still learns.
type void struct {
	cause   error
	dropped atomic.Uint64
	toldAt  atomic.Int64 // UnixNano of the last telling; 0: never told
}

// voidProvider is the provider of a configuration that makes shipping
// impossible, and the error NewLoggerProvider returns with it.
func voidProvider(c *providerConfig, cause error) (*LoggerProvider, error) {
	p := &LoggerProvider{void: &void{cause: cause}, shutdownDone: make(chan struct{})}
	p.reporter = newReporter(p, c)
	p.reporter.start(c.warnings)
	return p, fmt.Errorf("zaplens: no log records will be shipped: %w", cause)
}

// drop counts one record dropped, and tells why, at most once per
// voidTellInterval.
func (v *void) drop(r *reporter) {
	n := v.dropped.Add(1)
	now := time.Now().UnixNano()
	last := v.toldAt.Load()
	if last != 0 && now-last < int64(voidTellInterval) || !v.toldAt.CompareAndSwap(last, now) {
		return
	}
	r.say(fmt.Sprintf("zaplens: no log records are shipped (%d dropped so far): %v", n, v.cause))
}

// err is Shutdown's error: the cause, and what it cost.
func (v *void) err() error {
	return fmt.Errorf("zaplens: no log records were shipped (%d dropped): %w", v.dropped.Load(), v.cause)
}

// voidLogger is a void provider's logger: enabled, so that each record
// reaches it to be counted, until Shutdown.
type voidLogger struct {
	embedded.Logger
	p *LoggerProvider
}

func (l voidLogger) Enabled(context.Context, log.EnabledParameters) bool { return !l.p.stopped.Load() }

func (l voidLogger) Emit(context.Context, log.Record) {
	if !l.p.stopped.Load() {
		l.p.void.drop(l.p.reporter)
	}
}
