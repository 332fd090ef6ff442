package zaplens

import (
	"context"
	"fmt"
	"maps"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/direct"
	"github.com/zaplens/zaplens/internal/otlpwire"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// Core is the bridge alone: a zapcore.Core that sends each entry it is given
// to an OpenTelemetry logger, one per zap logger name. Tee it with the
// program's own core with [NewTee] or [WrapCore], which also print the trace
// ids; with zapcore.NewTee the other core prints none.
//
// Level and logger-name filters are decided in Check, before any field is
// converted. A Core is safe for concurrent use.
type Core struct {
	b *bridge

	// What With added, converted once, for both ways (see
	// zapfield.With), and the context, if any, with its span.
	with     zapfield.With
	ctx      context.Context
	sc       trace.SpanContext
	ctxAttrs []attribute.KeyValue // what ctx gives the features of ctxattrs.go: read once for every entry
	event    string               // the event name With gave, if any
}

// bridge is what every core derived from one NewCore shares.
type bridge struct {
	cfg      config
	provider log.LoggerProvider
	level    zapcore.LevelEnabler // what any logger wants: cfg.level, or with WithLevelFor the union of levels
	perName  bool                 // WithLevelFor was given: each scope has its own level
	redact   redactSource         // a zaplens provider's WithRedactKeys, for what leaves around its encoder

	mu     sync.Mutex                             // serialises additions to scopes
	scopes atomic.Pointer[map[string]*namedScope] // by zap logger name; copied on write
	last   atomic.Pointer[namedScope]             // the scope found last: most entries have their logger's name before

	losses  lossCounter
	flushes flushGroup
	hold    *holdStore // with WithHold
}

// scope is what the bridge knows of one zap logger name.
type scope struct {
	logger  log.Logger
	wire    direct.Logger        // logger itself when it takes OTLP bytes: no log.Record needed
	terms   direct.Terms         // wire's, read once
	bridged bool                 // the name passes the filters and the logger is not a no-op
	level   zapcore.LevelEnabler // the name's own level, set only with WithLevelFor
}

// namedScope is a cached scope and its logger name.
type namedScope struct {
	name string
	scope
}

// maxScopes bounds the scope cache, against a program that names loggers
// after unbounded values; past it, names are resolved on each entry.
const maxScopes = 4096

// NewCore returns the bridge core configured by opts.
func NewCore(opts ...Option) *Core {
	cfg := newConfig(opts)
	checkPrefixes("WithLoggerName", cfg.include)
	checkPrefixes("WithoutLoggerName", cfg.exclude)
	checkLevelPrefixes(cfg.levels)
	b := &bridge{cfg: cfg, provider: cfg.provider, level: cfg.anyLevel(), perName: len(cfg.levels) > 0}
	if b.provider == nil {
		b.provider = otel.GetLoggerProvider()
	}
	b.redact.init(b.provider)
	if cfg.hold.on {
		b.hold = newHoldStore(cfg.hold)
	}
	b.scopes.Store(&map[string]*namedScope{})
	return &Core{b: b}
}

// Enabled reports whether the bridge sends entries at level l.
// With [WithLevelFor], it is true if any logger's level takes l. Unlike
// Check, it does not ask the provider: zap asks Enabled without the
// logger's name, and a provider that refuses one scope may take another's.
// With [WithHold], it is true from the hold level on.
func (c *Core) Enabled(l zapcore.Level) bool {
	return c.b.level.Enabled(l) || c.b.cfg.hold.holds(l)
}

// Level returns the least level the bridge sends, for zapcore.LevelOf:
// with [WithLevelFor], the least of any logger's.
func (c *Core) Level() zapcore.Level {
	l := zapcore.LevelOf(c.b.level)
	if c.b.cfg.hold.on {
		l = min(l, c.b.cfg.hold.level)
	}
	return l
}

// With returns a core that adds fields to every entry. They are converted
// here, once; a context among them becomes the default for later entries.
func (c *Core) With(fields []zapcore.Field) zapcore.Core {
	return c.withContext(fields, readEntry(fields))
}

// withContext is With, the fields' context already read (a tee reads it too). The
// last context given wins, even one whose span could not be read: an
// earlier one would put the entries in the wrong trace.
func (c *Core) withContext(fields []zapcore.Field, ec entryRead) (with *Core) {
	if len(fields) == 0 {
		return c
	}
	nc := *c
	defer func() {
		if r := recover(); r != nil {
			c.b.losses.add("panic in With: " + zapfield.PanicText(r))
			with = c
		}
	}()
	if ec.n > 0 {
		nc.ctx, nc.sc, nc.ctxAttrs = ec.ctx, ec.sc, nil
		if ec.ctx != nil {
			nc.ctxAttrs = c.b.cfg.appendCtxAttrs(nil, ec.ctx)
		}
	}
	if ec.events > 0 {
		nc.event = otlpwire.ValidString(ec.event) // made valid once, for every entry
	}
	if ec.n+ec.events == len(fields) {
		return &nc // a per-request context, an event name, nothing else: nothing to convert
	}
	e := zapfield.GetEncoder()
	defer zapfield.PutEncoder(e)
	e.Entry.Redact = c.b.redact.get()
	var lim *otlpwire.Limits
	if p, ok := c.b.provider.(direct.Provider); ok {
		l := p.DirectLimits()
		lim = &l
	}
	nc.with = e.With(&c.with, fields, lim)
	return &nc
}

// Check adds the core to ce when the entry passes the level and logger-name
// filters and the provider's logger for its name is enabled for it. Nothing
// is converted here. A DPanic, Panic or Fatal entry is taken whatever the
// filters: zap may end the program after it, and what is queued must leave
// first.
func (c *Core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if ent.Level >= zapcore.DPanicLevel {
		t := &terminalWrite{core: c}
		ce = ce.AddCore(ent, t)
		t.ce = ce
		return ce
	}
	if s, _ := c.b.route(ent.Level, ent.LoggerName); s.bridged && (s.wire != nil || c.takes(s, ent.Level)) {
		return ce.AddCore(ent, c)
	}
	return ce
}

// takes asks the scope's logger, as the official bridge's Check does,
// whether it is enabled for an entry at l, so that an entry its provider
// would drop (a minimum severity, say) is not converted for nothing. Check
// knows With's context and event name, not yet the entry's own: Write
// asks again with those. With WithSpanEvents, an entry the logger does not
// take may still be a span event, and is taken. A zaplens provider's
// logger is not asked here: it refuses only once shut down, which Write
// reads as cheaply.
func (c *Core) takes(s *scope, l zapcore.Level) bool {
	if c.b.cfg.spans.on {
		return true
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	defer c.b.recoverLoss("Enabled")
	return s.logger.Enabled(ctx, log.EnabledParameters{Severity: severity(l), EventName: c.event})
}

// terminalWrite writes an entry after which zap may panic or exit, then
// flushes the provider when it will.
type terminalWrite struct {
	core *Core
	ce   *zapcore.CheckedEntry
}

func (t *terminalWrite) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	err := t.core.Write(ent, fields)
	t.core.b.flushTerminal(ent.Level, t.ce)
	return err
}

func (t *terminalWrite) Enabled(l zapcore.Level) bool        { return t.core.Enabled(l) }
func (t *terminalWrite) With(f []zapcore.Field) zapcore.Core { return t.core.With(f) }
func (t *terminalWrite) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return t.core.Check(e, ce)
}
func (t *terminalWrite) Sync() error { return t.core.Sync() }

// flushTerminal flushes after a Panic or Fatal entry, and after a DPanic one
// only when zap will panic, as it does in development: a production DPanic
// is an error line, and must not hold the call for the flush bound.
func (b *bridge) flushTerminal(l zapcore.Level, ce *zapcore.CheckedEntry) {
	if l == zapcore.DPanicLevel && !zapWillPanic(ce) {
		return
	}
	_ = b.flush()
}

// zapWillPanic reads zap's own decision for a DPanic entry: zap gives the
// checked entry a hook, run after the cores' Write, only when it will panic
// (a development logger). The hook is unexported; if this zap has none by
// that name, the entry is flushed, as before.
func zapWillPanic(ce *zapcore.CheckedEntry) bool {
	if ce == nil || checkedEntryAfter == nil {
		return true
	}
	return !reflect.ValueOf(ce).Elem().FieldByIndex(checkedEntryAfter).IsNil()
}

// checkedEntryAfter is the index of zap's hook field in CheckedEntry, found
// once; nil if this zap has no such interface field.
var checkedEntryAfter = func() []int {
	f, ok := reflect.TypeFor[zapcore.CheckedEntry]().FieldByName("after")
	if !ok || f.Type.Kind() != reflect.Interface {
		return nil
	}
	return f.Index
}()

// Write sends the entry. It never fails: what the bridge cannot send is
// counted by [Core.Lost] and told on stderr at most once per interval, never
// through zap's error output.
func (c *Core) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	e := getEntry()
	defer putEntry(e)
	// A terminal entry comes here past Check's filters.
	s, held := c.b.route(ent.Level, ent.LoggerName)
	r := readEntry(fields)
	c.write(e, s, held, &r, &ent, fields)
	return nil
}

// Sync flushes the provider, when it can be flushed, within the flush bound.
func (c *Core) Sync() error { return c.b.flush() }

// Lost reports how many entries the bridge itself could not send: a panic it
// recovered, or a recursion it cut. Losses in the export pipeline are the
// provider's to count. [BridgeLost] gives the same for every bridge in the
// process, for a WrapCore user who holds no *Core.
func (c *Core) Lost() uint64 { return c.b.losses.n.Load() }

// BridgeLost reports how many entries all the bridges of this process
// could not hand to their providers (see [Core.Lost]).
func BridgeLost() uint64 { return bridgeLost.Load() }

// bridgeLost is the sum of every bridge's losses.
var bridgeLost atomic.Uint64

// write converts the entry with e, an empty entryState, and emits it to the
// scope's logger, or holds it in its trace when held (see WithHold). r is
// what the entry's fields say, read once.
func (c *Core) write(e *entryState, s *scope, held bool, r *entryRead, ent *zapcore.Entry, fields []zapcore.Field) {
	if !s.bridged {
		return // filtered out: a terminal entry, or a caller that skipped Check
	}
	defer c.b.recoverLoss("Write")
	e.enc.Entry.Redact = c.b.redact.get()
	ctx, sc := c.entryContext(r)
	if held && !sc.IsValid() {
		return // only an entry of a trace is held
	}
	if c.b.cfg.traceBased.drops(ent.Level, &sc) {
		return // an unsampled trace's entry, below WithTraceBased's level
	}
	if !held && c.b.hold != nil && ent.Level >= c.b.cfg.hold.trigger && sc.IsValid() {
		c.b.shipHeld(sc.TraceID()) // the trace failed: what it held goes first
	}
	// Asked here, with the entry's context, rather than in Check: a
	// processor may decide by the span, or by the event name. A zaplens
	// provider's logger is asked without the interface: it decides by
	// its provider's state alone.
	sev := severity(ent.Level)
	event := c.eventName(r)
	var enabled bool
	if s.wire != nil {
		enabled = s.wire.Open()
	} else {
		enabled = s.logger.Enabled(ctx, log.EnabledParameters{Severity: sev, EventName: event})
	}
	var span trace.Span // set when the entry is also to be a span event
	if c.b.cfg.spans.on && !held {
		span = c.b.cfg.spans.mark(ctx, *ent)
	}
	if !enabled && span == nil {
		return
	}
	c.addCtxAttrs(&e.enc, r)
	// One record for both ways, so that a direct way that gives up
	// partway leaves the general one nothing to build again. A span
	// event needs the attributes, which only the general way makes.
	var rec otlpwire.Record
	if s.wire != nil {
		setWireRecord(&rec, ent, sev, sc, event)
		if span == nil && !r.nested && c.writeDirect(s, e, &rec, ent, fields, held) {
			return
		}
	}
	attrs := e.enc.Attributes(&c.with, ent, fields)
	if span != nil {
		red := e.enc.Entry.Redact
		c.b.cfg.spans.addEvent(span, *ent, e.enc.Err(), red.Attrs(attrs), red)
	}
	if !enabled {
		return
	}
	if s.wire != nil {
		// A logger that takes OTLP bytes encodes the converted entry
		// straight to them: the general way.
		if !held {
			e.keepRecord(s.wire.EnqueueAttributes(e.record[:0], rec, attrs))
			return
		}
		b, cut := s.wire.AppendAttributes(e.record[:0], rec, attrs)
		e.keepRecord(b)
		if !c.b.hold.keepWire(sc.TraceID(), rec.Observed, s.wire, &s.terms.Limits, b, cut) {
			s.wire.Enqueue(b, cut) // its trace failed meanwhile
		}
		return
	}
	var lrec log.Record
	fillRecord(&lrec, ent, sev, e.enc.Err(), attrs)
	lrec.SetEventName(event)
	if held && c.b.hold.keepRecord(sc, ent.Time, c.b, s.logger, &lrec) {
		return
	}
	c.b.emit(ctx, s.logger, &lrec)
}

// shipHeld ships what the bridge holds for trace id, outside the store's
// lock: a provider may log back into the bridge.
func (b *bridge) shipHeld(id trace.TraceID) {
	if out, ok := b.hold.take(id); ok {
		out.ship()
	}
}

// HoldStats returns the counts of entries held with [WithHold]; zero
// without it.
func (c *Core) HoldStats() HoldStats {
	if c.b.hold == nil {
		return HoldStats{}
	}
	return c.b.hold.Stats()
}

// entryContext is the entry's context and span: its own, else With's;
// never a nil context.
func (c *Core) entryContext(r *entryRead) (context.Context, trace.SpanContext) {
	switch {
	case r.ctx != nil:
		return r.ctx, r.sc
	case c.ctx != nil:
		return c.ctx, c.sc
	}
	return context.Background(), c.sc
}

// eventName is the entry's event name, made valid: its own, else With's.
func (c *Core) eventName(r *entryRead) string {
	switch {
	case r.events > 0:
		return otlpwire.ValidString(r.event)
	case c.event != "":
		return c.event
	}
	return ""
}

// fillRecord makes rec the log.Record of the converted entry, for any other
// provider. rec is the caller's, so that it stays on the stack.
func fillRecord(rec *log.Record, ent *zapcore.Entry, sev log.Severity, err error, attrs []attribute.KeyValue) {
	rec.SetTimestamp(ent.Time)
	rec.SetBody(zapfield.StringValue(ent.Message))
	rec.SetSeverity(sev)
	rec.SetSeverityText(ent.Level.String())
	rec.SetErr(err)
	rec.AddAttributes(attrs...)
}

// route decides Check: level first, as cheap as zap's own, then the name.
// It returns the scope to emit to, not bridged when either filter says no,
// unless WithHold's level takes the entry: held is true then, and the
// scope is the one to hold it for. With WithLevelFor, the first test is
// what any logger wants, and the name's own level, cached with its scope,
// decides. The scope is shared: read it, never change it.
func (b *bridge) route(l zapcore.Level, name string) (s *scope, held bool) {
	if !b.level.Enabled(l) {
		return b.holdScope(l, name)
	}
	s = b.scope(name)
	if b.perName && !s.level.Enabled(l) {
		return b.holdScope(l, name)
	}
	return s, false
}

// holdScope is the scope to hold an entry the levels leave out for, if
// WithHold's level takes it.
func (b *bridge) holdScope(l zapcore.Level, name string) (*scope, bool) {
	if !b.cfg.hold.holds(l) {
		return &noScope, false
	}
	s := b.scope(name)
	return s, s.bridged
}

// noScope is where an entry the filters keep out goes: nowhere.
var noScope scope

// scope returns the cached scope of a logger name, creating it on first use.
// The scope found last is tried first: a string compare where the name is
// the last one's, as it is for a program's few loggers in a loop, in place
// of a map lookup. It is stored only when it changes. BenchmarkScope
// measures it against the map (benchmarks/results/scope-cache.txt): it
// wins for one name and for goroutines each on its own, and loses only
// when two names strictly alternate across CPUs.
func (b *bridge) scope(name string) *scope {
	if l := b.last.Load(); l != nil && l.name == name {
		return &l.scope
	}
	if s, ok := (*b.scopes.Load())[name]; ok {
		b.last.Store(s)
		return &s.scope
	}
	return b.addScope(name)
}

// addScope makes the scope outside the lock: provider.Logger may log, and
// that log may come back to this bridge.
func (b *bridge) addScope(name string) *scope {
	s := &namedScope{name: name, scope: b.newScope(name)}
	b.mu.Lock()
	defer b.mu.Unlock()
	old := *b.scopes.Load()
	if s, ok := old[name]; ok {
		return &s.scope
	}
	if len(old) < maxScopes {
		m := maps.Clone(old)
		m[name] = s
		b.scopes.Store(&m)
	}
	return &s.scope
}

func (b *bridge) newScope(name string) (s scope) {
	if b.perName {
		defer func() { s.level = b.cfg.levelOf(name) }()
	}
	scopeName := name
	if scopeName == "" {
		scopeName = b.cfg.defaultScope
	}
	if !b.cfg.bridgesName(name) {
		// No logger asked of the provider: an excluded name, however many
		// there are, leaves nothing behind there.
		return scope{logger: noop.Logger{}}
	}
	defer func() {
		if recover() != nil {
			s = scope{logger: noop.Logger{}}
		}
	}()
	s.logger = b.provider.Logger(otlpwire.ValidString(scopeName))
	if l, ok := s.logger.(direct.Logger); ok {
		s.wire, s.terms = l, l.Terms()
	}
	_, isNoop := s.logger.(noop.Logger)
	s.bridged = !isNoop
	return s
}

// bridgesName applies the logger-name filters; exclusions win.
func (c *config) bridgesName(name string) bool {
	if hasPrefix(name, c.exclude) {
		return false
	}
	return len(c.include) == 0 || hasPrefix(name, c.include)
}

// hasPrefix reports whether name is one of prefixes or a child of one:
// prefixes match on "." boundaries only.
func hasPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if name == p || (strings.HasPrefix(name, p) && name[len(p)] == '.') {
			return true
		}
	}
	return false
}

// flush calls the provider's ForceFlush, when it has one, and returns within
// the flush bound even when the provider does not honour its context.
func (b *bridge) flush() error {
	if b.cfg.flushTimeout <= 0 {
		return nil
	}
	f, ok := b.flusher()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.flushTimeout)
	defer cancel()
	err := b.flushes.do(ctx, f, b.cfg.flushTimeout)
	if err == nil || strings.HasPrefix(err.Error(), "zaplens: ") {
		return err // a LoggerProvider's says what failed already
	}
	return fmt.Errorf("zaplens: flush: %w", err)
}

type flusher interface {
	ForceFlush(context.Context) error
}

// flusher finds what to flush: the configured provider, or the global one
// as it is now, since it may have been set after the core was built.
func (b *bridge) flusher() (flusher, bool) {
	p := b.cfg.provider
	if p == nil {
		p = otel.GetLoggerProvider()
	}
	f, ok := p.(flusher)
	return f, ok
}

// recoverLoss is deferred by every entry point that runs code the bridge
// does not own; a panic there is counted and told, never passed on.
func (b *bridge) recoverLoss(where string) {
	if r := recover(); r != nil {
		b.losses.add("panic in " + where + ": " + zapfield.PanicText(r))
	}
}

// lossReportInterval spaces the lines that tell of losses.
const lossReportInterval = 10 * time.Second

// lossCounter counts the entries the bridge loses and tells of them on
// stderr, the one channel that does not depend on the bridge, at most once
// per interval.
type lossCounter struct {
	n        atomic.Uint64
	reported atomic.Int64 // unix nanoseconds of the last line
}

// lossOutput is where losses are told; tests replace it.
var lossOutput = zapcore.Lock(os.Stderr)

func (l *lossCounter) add(why string) {
	n := l.n.Add(1)
	bridgeLost.Add(1)
	now := time.Now().UnixNano()
	last := l.reported.Load()
	if now-last < int64(lossReportInterval) && last != 0 {
		return
	}
	if l.reported.CompareAndSwap(last, now) {
		fmt.Fprintf(lossOutput, "zaplens: %d entries lost so far; last: %s\n", n, why)
	}
}

// levelOffset turns a zap level into an index of severities: Debug, zap's
// least level (-1), is index 0.
const levelOffset = -zapcore.DebugLevel

// severities are OpenTelemetry's numbers for zap's levels, Debug to Fatal.
var severities = [...]log.Severity{
	zapcore.DebugLevel + levelOffset:  log.SeverityDebug,
	zapcore.InfoLevel + levelOffset:   log.SeverityInfo,
	zapcore.WarnLevel + levelOffset:   log.SeverityWarn,
	zapcore.ErrorLevel + levelOffset:  log.SeverityError,
	zapcore.DPanicLevel + levelOffset: log.SeverityFatal1,
	zapcore.PanicLevel + levelOffset:  log.SeverityFatal2,
	zapcore.FatalLevel + levelOffset:  log.SeverityFatal3,
}

// severity maps a zap level; custom levels below Debug are Trace, above
// Fatal the last Fatal.
func severity(l zapcore.Level) log.Severity {
	switch {
	case l < zapcore.DebugLevel:
		return log.SeverityTrace
	case l > zapcore.FatalLevel:
		return log.SeverityFatal4
	}
	return severities[l+levelOffset]
}
