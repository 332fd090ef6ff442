package otlplog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	"go.opentelemetry.io/otel/log/noop"

	"github.com/zaplens/zaplens/internal/direct"
	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/pipeline"
	"github.com/zaplens/zaplens/internal/spool"
)

// LoggerProvider is an OpenTelemetry log.LoggerProvider with an export
// pipeline of its own: each record is encoded once, straight to OTLP
// protobuf, queued as bytes, batched by scope and sent over OTLP/gRPC or
// OTLP/HTTP (or printed, with the console exporter), with every record
// counted, losses reported, and a Shutdown that keeps its deadline.
// Build it with [NewLoggerProvider]. A provider turned off is a no-op: its
// loggers are disabled and cost nothing. One whose configuration makes
// shipping impossible counts what it is given as dropped, and tells why.
type LoggerProvider struct {
	embedded.LoggerProvider

	pipe     *pipeline.Pipeline // nil for a no-op or void provider
	void     *void              // set when the configuration makes shipping impossible
	limits   otlpwire.Limits
	reporter *reporter
	close    func(context.Context) error // the exporter's
	stopped  atomic.Bool
	spool    *spool.Spool   // nil without WithSpool
	spoolErr error          // why the spool stepped aside at start
	shipper  *spool.Shipper // sends what ended processes left in the spool
	uids     *recordUIDs    // log.record.uid's; nil without WithRecordUID

	mu            sync.Mutex
	loggers       map[loggerKey]*logger
	overflowScope int // the pipeline's number for overflowScope; -1 until used

	shutdownOnce sync.Once
	shutdownDone chan struct{}
	shutdownErr  error
}

var _ log.LoggerProvider = (*LoggerProvider)(nil)

// NewLoggerProvider builds a provider from the options and the standard
// OpenTelemetry environment variables (the README lists them).
// Options win over the environment. When OTEL_CONFIG_FILE names a
// declarative configuration file, its logger_provider and resource
// sections are taken too, over the variables and under the options; what
// it asks that zaplens cannot run (several processors, a simple one,
// another exporter) is an error naming the setting's path in the file
// (docs/opentelemetry.md). The file's parser is linked in by importing
// [github.com/zaplens/zaplens/otlplog/configfile]; without it, a set
// OTEL_CONFIG_FILE is an error naming that import.
//
// It never returns nil. When OTEL_SDK_DISABLED=true or
// OTEL_LOGS_EXPORTER=none it returns a no-op provider and no error. A
// variable with a bad value (a malformed endpoint, an unreadable
// certificate, a timeout not in milliseconds) is treated as not set, as
// the OpenTelemetry spec says, and told once on the loss writer: the
// provider ships with the default, and no error is returned, so that a
// typo in a deployment never turns shipping off. A configuration that
// makes shipping impossible (an unsupported protocol, an invalid option)
// returns an error that names the setting, with a provider that takes
// every record, counts it dropped, says so on the loss writer while
// records come (at most once a minute) and returns the cause from
// Shutdown, so that
//
//	p, err := otlplog.NewLoggerProvider(ctx)
//	defer p.Shutdown(ctx)
//
// is always safe, the program goes on logging to its own core, and a
// program that ignores err still learns. No message quotes a header value
// or credentials.
//
// Building does not connect: a collector that is down at start is retried
// by each export, and records wait in the queue meanwhile.
func NewLoggerProvider(ctx context.Context, opts ...Option) (*LoggerProvider, error) {
	c := newProviderConfig(opts)
	off, err := c.resolve(ctx)
	if err != nil {
		return voidProvider(&c, err)
	}
	if off {
		return noopProvider(), nil
	}
	p, err := build(ctx, &c)
	if err != nil {
		return voidProvider(&c, err)
	}
	if p.spoolErr != nil {
		return p, fmt.Errorf("zaplens: logger provider: %w", p.spoolErr)
	}
	return p, nil
}

// resolve reads the configuration file, OTEL_CONFIG_FILE, then the
// variables it leaves to be read, into what no option set, as
// NewLoggerProvider and ShipSpool both read them. off tells that export is
// off by configuration.
func (c *providerConfig) resolve(ctx context.Context) (off bool, err error) {
	file, err := c.applyConfigFile(ctx)
	if err != nil {
		return false, err
	}
	if file != nil {
		if file.Disabled && !c.disabled.set {
			return true, nil
		}
		if c.resource == nil {
			c.resource, c.serviceFallback = file.Resource, true
		}
	}
	if err := c.resolveEnv(); err != nil {
		return false, err
	}
	return c.off(), nil
}

// newProviderConfig applies opts, skipping nil ones.
func newProviderConfig(opts []Option) providerConfig {
	var c providerConfig
	for _, o := range opts {
		if o != nil {
			o.applyProvider(&c)
		}
	}
	return c
}

// noopProvider is a provider with no pipeline: every method returns at
// once, and its loggers are noop.Logger.
func noopProvider() *LoggerProvider { return &LoggerProvider{} }

// build assembles the pipeline: encoder -> queue -> exporter.
func build(ctx context.Context, c *providerConfig) (*LoggerProvider, error) {
	if err := c.resolveSpool(); err != nil {
		return nil, err
	}
	res, err := newResource(ctx, c)
	if err != nil {
		return nil, err
	}
	p := &LoggerProvider{
		limits: otlpwire.Limits{AttributeCount: c.attrCount.value, ValueLength: c.attrValueLen.value, CheckUTF8: true,
			Redact: otlpwire.NewRedactor(direct.RedactedKeys(c.redactKeys)...)},
		loggers:       map[loggerKey]*logger{},
		overflowScope: -1,
		shutdownDone:  make(chan struct{}),
	}
	if !c.attrCount.set {
		p.limits.AttributeCount = otlpwire.DefaultLimits.AttributeCount
	}
	if c.recordUID.value {
		p.uids = newRecordUIDs()
	}
	p.reporter = newReporter(p, c)
	exp, err := newExporter(c, p)
	if err != nil {
		return nil, err
	}
	p.close = exp.close
	metrics := newPipelineMetrics(c, exp)
	resource := otlpwire.NewResource(res.Attributes(), res.SchemaURL())
	journal := p.openSpool(c, resource)
	p.pipe = pipeline.New(pipeline.Config{
		MaxQueueBytes:   c.queueBytes.value,
		MaxQueueRecords: c.queueSize.value, // 0 unless set
		MaxBatchRecords: c.batchSize.value,
		MaxRequestBytes: c.requestBytes.value,
		ScheduleDelay:   c.scheduleDelay.value,
		ExportTimeout:   c.exportTimeout.value,
		BlockOnFull:     c.blockOnFull,
		Resource:        resource,
		Export:          metrics.wrap(exp.export),
		Journal:         journal,
	})
	metrics.observe(p.pipe)
	p.startShipper(c, exp.export) // before the reporter's goroutine, which reads p.shipper
	p.reporter.start(c.warnings)
	return p, nil
}

// Logger returns the logger of the named instrumentation scope. Loggers
// are kept per scope; past [maxProviderScopes] distinct scopes, later ones
// share one overflow scope, zaplens.overflow, each record keeping its own
// scope's name as otel.scope.name, so that a program naming loggers after
// unbounded values cannot grow the provider without bound.
func (p *LoggerProvider) Logger(name string, opts ...log.LoggerOption) log.Logger {
	switch {
	case p.void != nil:
		return voidLogger{p: p}
	case p.pipe == nil:
		return noop.Logger{}
	}
	cfg := log.NewLoggerConfig(opts...)
	attrs := cfg.InstrumentationAttributes()
	key := loggerKey{name: name, version: cfg.InstrumentationVersion(), schemaURL: cfg.SchemaURL(),
		attrs: attrs.Equivalent()}
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.loggers[key]; ok {
		return l
	}
	if len(p.loggers) >= maxProviderScopes {
		return p.overflow(name)
	}
	scope := otlpwire.NewScope(name, key.version, key.schemaURL, attrs.ToSlice())
	l := newLogger(p, p.pipe.AddScope(scope), "")
	p.loggers[key] = l
	return l
}

// DirectLimits returns the limits the provider's loggers encode with, for
// strings made valid UTF-8 already, and its redactor: for the zaplens
// bridge, which writes its entries to OTLP bytes itself for this
// provider's loggers. Other code has no use for it.
func (p *LoggerProvider) DirectLimits() otlpwire.Limits {
	lim := p.limits
	lim.CheckUTF8 = false
	return lim
}

var _ direct.Provider = (*LoggerProvider)(nil)

// maxProviderScopes bounds the scopes a provider keeps.
const maxProviderScopes = 4096

// overflow is the logger for a scope past the bound: the overflow scope,
// one for all of them, with the scope's own name kept on each record as
// otel.scope.name. It is not kept: nothing grows with the names.
func (p *LoggerProvider) overflow(name string) *logger {
	if p.overflowScope < 0 {
		p.overflowScope = p.pipe.AddScope(otlpwire.NewScope(overflowScope, "", "", nil))
	}
	return newLogger(p, p.overflowScope, name)
}

// overflowScope is the scope of records from loggers past the bound.
const overflowScope = "zaplens.overflow"

// keyScopeName carries an overflowed logger's scope name, as the semantic
// conventions carry a scope's name outside OTLP.
const keyScopeName = "otel.scope.name"

// Stats returns the counts so far; see [Stats] for what they mean. A no-op
// provider's are all zero.
func (p *LoggerProvider) Stats() Stats {
	switch {
	case p.void != nil:
		n := p.void.dropped.Load()
		return Stats{Emitted: n, Dropped: n}
	case p.pipe == nil:
		return Stats{}
	}
	s := statsOf(p.pipe.Counts())
	p.spoolStats(&s)
	return s
}

// ForceFlush exports every queued record and waits, at most until ctx is
// done (or [DefaultShutdownTimeout] if ctx has no deadline), for the
// exports to finish. An endpoint that refuses connections is tried once,
// not retried. It returns an error when ctx ran out or records failed to
// export meanwhile. A flush cut short by ctx goes on in the background,
// bounded by the exporter's timeout, so that no record is left uncounted.
func (p *LoggerProvider) ForceFlush(ctx context.Context) error {
	switch {
	case p.void != nil:
		return p.void.err()
	case p.pipe == nil:
		return nil
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	before := p.pipe.Counts()
	err := p.pipe.Flush(ctx)
	after := p.pipe.Counts()
	failed := after.Failed - before.Failed
	_, last := p.pipe.LastFailure()
	switch {
	case failed > 0 && err != nil:
		return fmt.Errorf("zaplens: flush: %s failed to export: %w; then it ran out of time: %w", logRecords(failed), last, err)
	case failed > 0:
		return fmt.Errorf("zaplens: flush: %s failed to export: %w", logRecords(failed), last)
	case err != nil:
		return fmt.Errorf("zaplens: flush: %w", err)
	}
	return nil
}

// Shutdown flushes the queue, stops the exporter and makes the final loss
// report. It returns by the time ctx is done, or after
// [DefaultShutdownTimeout] if ctx has no deadline, even with the collector
// down; a slow loss-report writer or callback may add 100ms. When an
// earlier flush has been waiting for a second or more (a collector that
// does not answer, and a Sync that gave up on it), a ctx without deadline
// gets [StuckShutdownTimeout] instead: the program's stop is not made to
// wait it out twice. If any record
// was not delivered over the provider's life, its error holds a
// [*DeliveryError] that says how many, why, and the last export error; the
// loss writer gets only the tally (see [Loss.String]). A provider whose
// configuration made shipping impossible returns that cause, and how many
// records it dropped. Its loggers are disabled from then
// on, so the bridge sends them nothing more. A later or concurrent call
// returns the first call's result, or its own context's error if that
// comes first.
func (p *LoggerProvider) Shutdown(ctx context.Context) error {
	if p.pipe == nil && p.void == nil {
		return nil
	}
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); !ok && p.pipe != nil && p.pipe.FlushWaiting() >= time.Second {
		ctx, cancel = context.WithTimeout(ctx, StuckShutdownTimeout)
	} else {
		ctx, cancel = bounded(ctx)
	}
	defer cancel()
	first := false
	p.shutdownOnce.Do(func() { first = true })
	if first {
		// The first call does the work, bounded by its own deadline.
		p.stopped.Store(true)
		p.shutdownErr = p.shutdown(ctx)
		close(p.shutdownDone)
		return p.shutdownErr
	}
	// A later or concurrent call waits for it, within its own deadline.
	select {
	case <-p.shutdownDone:
		return p.shutdownErr
	case <-ctx.Done():
		return fmt.Errorf("zaplens: shutdown: %w", ctx.Err())
	}
}

func (p *LoggerProvider) shutdown(ctx context.Context) error {
	if p.void != nil {
		p.reporter.close(ctx, nil)
		return p.void.err()
	}
	shipped := p.stopShipper(ctx)
	err := p.pipe.Shutdown(ctx)
	shipped()
	p.pipe.CloseJournal(ctx)
	if cerr := p.close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	var de *DeliveryError
	if s := p.Stats(); s.Lost()+s.Queued > 0 {
		de = &DeliveryError{Stats: s}
		de.ErrAt, de.Err = p.pipe.LastFailure()
	}
	p.reporter.close(ctx, de)
	if de != nil {
		return de
	}
	if err != nil {
		return fmt.Errorf("zaplens: shutdown: %w", err)
	}
	return nil
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
// out. errors.As finds it in Shutdown's error. The loss writer gets its
// tally at Shutdown, without the last export error, which it was told when
// that happened: a program that prints Shutdown's error to stderr shows the
// cause once.
type DeliveryError struct {
	Stats Stats     // the counts when Shutdown ended
	Err   error     // the latest export error, if any
	ErrAt time.Time // when Err happened
}

// Error says how many records were not delivered, and why, then the latest
// export error, with the time it happened, so that an old one is not read
// as the cause of the last loss.
func (e *DeliveryError) Error() string { return tally(e.Stats) + lastError(e.Err, e.ErrAt) }

// Unwrap returns the latest export error, if any.
func (e *DeliveryError) Unwrap() error { return e.Err }
