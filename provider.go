package zaplens

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	"go.opentelemetry.io/otel/log/noop"
	sdklog "go.opentelemetry.io/otel/sdk/log"
)

// LoggerProvider is an OpenTelemetry log.LoggerProvider with a counted
// export pipeline: the SDK's batch processor in front of an OTLP/gRPC (or
// console) exporter, a loss report, and a Shutdown that keeps its deadline.
// Build it with [NewLoggerProvider]. A provider that could not be set up,
// or was turned off, is a no-op: its loggers are disabled and cost nothing.
type LoggerProvider struct {
	embedded.LoggerProvider

	inner    log.LoggerProvider
	sdk      *sdklog.LoggerProvider // nil for a no-op provider
	gate     *gate
	reporter *reporter
	counts   counters
	flushes  flushes

	shutdownOnce sync.Once
	shutdownErr  error
}

var _ log.LoggerProvider = (*LoggerProvider)(nil)

// NewLoggerProvider builds a provider from the options and the standard
// OpenTelemetry environment variables (the README lists them).
// Options win over the environment.
//
// It never returns nil. When OTEL_SDK_DISABLED=true or
// OTEL_LOGS_EXPORTER=none it returns a no-op provider and no error; when the
// configuration is bad (a malformed endpoint, an unreadable certificate, a
// bad OTEL_BLRP_* value) it returns a no-op provider and an error that
// names the setting, so that
//
//	p, err := zaplens.NewLoggerProvider(ctx)
//	defer p.Shutdown(ctx)
//
// is always safe and the program goes on logging to its own core. No
// message quotes a header value or credentials.
//
// Building does not connect: a collector that is down at start is retried
// by each export, and records wait in the queue meanwhile.
func NewLoggerProvider(ctx context.Context, opts ...ProviderOption) (*LoggerProvider, error) {
	var c providerConfig
	for _, o := range opts {
		if o != nil {
			o.applyProvider(&c)
		}
	}
	if err := c.resolveEnv(); err != nil {
		return noopProvider(), fmt.Errorf("zaplens: logger provider: %w", err)
	}
	if c.off() {
		return noopProvider(), nil
	}
	p, err := build(ctx, &c)
	if err != nil {
		return noopProvider(), fmt.Errorf("zaplens: logger provider: %w", err)
	}
	return p, nil
}

func noopProvider() *LoggerProvider {
	return &LoggerProvider{inner: noop.NewLoggerProvider()}
}

// build assembles the pipeline: gate -> BatchProcessor -> tally -> exporter.
func build(ctx context.Context, c *providerConfig) (*LoggerProvider, error) {
	res, err := newResource(ctx, c)
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(ctx, c)
	if err != nil {
		return nil, err
	}
	p := &LoggerProvider{}
	p.gate = newGate(nil, &p.counts, c.queueSize.value, c.blockOnFull)
	p.gate.next = sdklog.NewBatchProcessor(&tally{Exporter: exp, gate: p.gate},
		sdklog.WithMaxQueueSize(c.queueSize.value),
		sdklog.WithExportMaxBatchSize(c.batchSize.value),
		sdklog.WithExportInterval(c.scheduleDelay.value),
		sdklog.WithExportTimeout(c.exportTimeout.value),
	)
	popts := []sdklog.LoggerProviderOption{sdklog.WithResource(res), sdklog.WithProcessor(p.gate)}
	if !c.keyDedup {
		popts = append(popts, sdklog.WithAllowKeyDuplication())
	}
	if c.attrCount.set {
		popts = append(popts, sdklog.WithAttributeCountLimit(c.attrCount.value))
	}
	if c.attrValueLen.set {
		popts = append(popts, sdklog.WithAttributeValueLengthLimit(c.attrValueLen.value))
	}
	p.sdk = sdklog.NewLoggerProvider(popts...)
	p.inner = p.sdk
	// The flush goes to the processor, not through the SDK provider: the
	// provider's Shutdown waits for its own operations, and a flush that
	// outlives its caller must not hold Shutdown up.
	p.flushes.run = func() error { return p.gate.next.ForceFlush(context.Background()) }
	p.reporter = newReporter(p.gate, c)
	return p, nil
}

// Logger returns the logger of the named instrumentation scope.
func (p *LoggerProvider) Logger(name string, opts ...log.LoggerOption) log.Logger {
	return p.inner.Logger(name, opts...)
}

// Stats returns the counts so far; see [Stats] for what they mean. A no-op
// provider's are all zero.
func (p *LoggerProvider) Stats() Stats {
	return p.counts.snapshot()
}

// ForceFlush exports every queued record and waits, at most until ctx is
// done (or [DefaultShutdownTimeout] if ctx has no deadline), for the
// exports to finish. It returns an error when ctx ran out or
// records failed to export meanwhile. A flush cut short by ctx goes on in
// the background, bounded by the exporter's timeout, so that no record is
// left uncounted.
func (p *LoggerProvider) ForceFlush(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	before := p.counts.snapshot()
	err := p.flushes.wait(ctx)
	after := p.counts.snapshot()
	if failed := after.Failed - before.Failed; failed > 0 {
		err = errors.Join(err, fmt.Errorf("zaplens: %d log records failed to export: %w", failed, p.gate.lastError()))
	}
	return err
}

// Shutdown flushes the queue, stops the exporter and makes the final loss
// report. It returns by the time ctx is done, or after
// [DefaultShutdownTimeout] if ctx has no deadline, even with the collector
// down; a slow loss-report writer or callback may add 100ms. If any record
// was not delivered over the provider's life, its error holds a
// [*DeliveryError] that says how many. Its loggers are disabled
// from then on, so the bridge sends them nothing more. Later calls return
// the first call's result.
func (p *LoggerProvider) Shutdown(ctx context.Context) error {
	p.shutdownOnce.Do(func() { p.shutdownErr = p.shutdown(ctx) })
	return p.shutdownErr
}

func (p *LoggerProvider) shutdown(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	// Logging calls waiting for room are SDK operations that its Shutdown
	// waits for: release them first.
	p.gate.stop()
	err := p.sdk.Shutdown(ctx)
	if ctx.Err() != nil {
		// The SDK may have given up before it reached the processor; stop
		// the batching goroutine and the exporter anyway, in the
		// background, bounded by the exporter's own timeout.
		go func() { _ = p.gate.next.Shutdown(context.Background()) }()
	}
	p.reporter.close(ctx)
	if s := p.counts.snapshot(); s.Lost()+s.Queued > 0 {
		err = errors.Join(&DeliveryError{Stats: s, Err: p.gate.lastError()}, err)
	}
	return err
}

// bounded gives ctx a deadline of DefaultShutdownTimeout if it has none.
func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultShutdownTimeout)
}

// DeliveryError is the error of a Shutdown after which some records were
// never delivered: dropped, failed, or still queued when its context ran
// out. errors.As finds it in Shutdown's error.
type DeliveryError struct {
	Stats Stats
	Err   error // the latest export error, if any
}

// Error says how many records were not delivered, and why.
func (e *DeliveryError) Error() string {
	s := e.Stats
	msg := fmt.Sprintf("zaplens: %d of %d log records not delivered (%d dropped, %d failed, %d unsent at shutdown)",
		s.Lost()+s.Queued, s.Emitted, s.Dropped, s.Failed, s.Queued)
	if e.Err != nil {
		msg += "; last export error: " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the latest export error, if any.
func (e *DeliveryError) Unwrap() error { return e.Err }
