package zaplens

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/multierr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"

	"github.com/zaplens/zaplens/internal/zapfield"
)

func TestScopeNames(t *testing.T) {
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp), WithDefaultScope("app")))
	logger.Info("root")
	logger.Named("a").Named("b").Info("child")
	logger.Named("a").Info("a")

	want := []string{"app", "a.b", "a"}
	for i, r := range c.records() {
		if got := r.InstrumentationScope().Name; got != want[i] {
			t.Errorf("record %d scope %q, want %q", i, got, want[i])
		}
	}
}

func TestSeverities(t *testing.T) {
	c := newCapture(t)
	core := NewCore(WithLoggerProvider(c.lp), WithLevel(zapcore.DebugLevel), WithFlushTimeout(0))
	levels := []struct {
		level zapcore.Level
		sev   log.Severity
	}{
		{zapcore.DebugLevel, 5}, {zapcore.InfoLevel, 9}, {zapcore.WarnLevel, 13},
		{zapcore.ErrorLevel, 17}, {zapcore.DPanicLevel, 21}, {zapcore.PanicLevel, 22},
		{zapcore.FatalLevel, 23},
	}
	for _, l := range levels {
		if ce := core.Check(zapcore.Entry{Level: l.level, Message: "m"}, nil); ce != nil {
			ce.Write()
		}
	}
	recs := c.records()
	if len(recs) != len(levels) {
		t.Fatalf("got %d records, want %d", len(recs), len(levels))
	}
	for i, l := range levels {
		if recs[i].Severity() != l.sev || recs[i].SeverityText() != l.level.String() {
			t.Errorf("%v: severity %v %q, want %v %q", l.level, recs[i].Severity(), recs[i].SeverityText(), l.sev, l.level.String())
		}
	}
}

func TestLevelFilter(t *testing.T) {
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp), WithLevel(zapcore.WarnLevel)))
	logger.Info("no")
	logger.Warn("yes")
	if r := c.only(t); r.Body().AsString() != "yes" {
		t.Errorf("bridged %q", r.Body().AsString())
	}
}

func TestLoggerNameFilters(t *testing.T) {
	names := []string{"", "megatron", "megatron.training", "megatron.training.loop",
		"megatron.trainingx", "megatron.training.loop.noisy", "data"}
	for _, tc := range []struct {
		name string
		opts []Option
		want []string
	}{
		{"all", nil, names},
		{"prefix on dot boundaries", []Option{WithLoggerName("megatron.training")},
			[]string{"megatron.training", "megatron.training.loop", "megatron.training.loop.noisy"}},
		{"several prefixes", []Option{WithLoggerName("data"), WithLoggerName("megatron")},
			[]string{"megatron", "megatron.training", "megatron.training.loop", "megatron.trainingx", "megatron.training.loop.noisy", "data"}},
		{"exclusion wins", []Option{WithLoggerName("megatron"), WithoutLoggerName("megatron.training.loop")},
			[]string{"megatron", "megatron.training", "megatron.trainingx"}},
		{"exclusion alone", []Option{WithoutLoggerName("megatron")}, []string{"", "data"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(t)
			logger := zap.New(NewCore(append(tc.opts, WithLoggerProvider(c.lp))...))
			for _, n := range names {
				logger.Named(n).Info(n)
			}
			var got []string
			for _, r := range c.records() {
				got = append(got, r.Body().AsString())
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("bridged %q, want %q", got, tc.want)
			}
		})
	}
}

// discardLogger is a log.Logger that keeps nothing, to measure what the
// bridge itself allocates.
type discardLogger struct{ embedded.Logger }

func (discardLogger) Emit(context.Context, log.Record)                    {}
func (discardLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

type discardProvider struct{ embedded.LoggerProvider }

func (discardProvider) Logger(string, ...log.LoggerOption) log.Logger { return discardLogger{} }

// fiveFieldsAndContext is the allocation tests' line: ctx and five
// fields.
func fiveFieldsAndContext(ctx context.Context) []zap.Field {
	return []zap.Field{Context(ctx), zap.Int("step", 1), zap.Float64("loss", 0.5),
		zap.String("phase", "train"), zap.Bool("ok", true), zap.Int64("tokens", 1<<20)}
}

// The bridge's own share of an entry: nothing for filtered entries, nothing
// for up to five fields with a context.
func TestAllocations(t *testing.T) {
	skipAllocsUnderRace(t)
	ctx, _ := spanContext(t)
	bridge := zap.New(NewCore(WithLoggerProvider(discardProvider{}), WithLoggerName("megatron")))
	other := bridge.Named("other")
	named := bridge.Named("megatron.training")
	tee := zap.New(NewTee(zapcore.NewNopCore(), WithLoggerProvider(discardProvider{})))
	fields := fiveFieldsAndContext(ctx)
	for _, tc := range []struct {
		name string
		log  func()
	}{
		{"below level", func() { named.Debug("d", fields...) }},
		{"outside prefixes", func() { other.Info("i", fields...) }},
		{"five fields and a context", func() { named.Info("i", fields...) }},
		{"tee below level", func() { tee.Debug("d", fields...) }},
	} {
		if n := testing.AllocsPerRun(200, tc.log); n != 0 {
			t.Errorf("%s: %v allocations per entry, want 0", tc.name, n)
		}
	}
	// Past five attributes log.Record itself grows a slice, once.
	with := named.With(zap.String("job", "j"), zap.Int("rank", 3))
	if n := testing.AllocsPerRun(200, func() { with.Info("i", fields...) }); n != 1 {
		t.Errorf("seven attributes: %v allocations per entry, want 1 (log.Record's)", n)
	}
	// An error with a verbose form (pkg/errors') costs what fmt and the
	// "<key>Verbose" name cost: 4 here. Its details are appended to the
	// entry's pooled slices; made in a slice of their own, they were 5.
	verbose := diffFormatterErr{msg: "m"}
	for _, f := range []zap.Field{zap.Error(verbose), zap.NamedError("cause", verbose)} {
		if n := testing.AllocsPerRun(200, func() { named.Info("i", f) }); n > 4 {
			t.Errorf("%s, an error with a verbose form: %v allocations per entry, want 4 at most", f.Key, n)
		}
	}
}

func TestCallerAndStack(t *testing.T) {
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp)), zap.AddCaller(), zap.AddStacktrace(zapcore.WarnLevel))
	logger.Info("info")
	logger.Warn("warn")
	logger.Error("error", zap.Error(errors.New("boom")))

	recs := c.records()
	a := attrs(recs[0])
	if !strings.HasSuffix(a[zapfield.KeyFilePath].AsString(), "core_test.go") || a[zapfield.KeyLineNumber].AsInt64() == 0 ||
		!strings.HasSuffix(a[zapfield.KeyFunctionName].AsString(), "TestCallerAndStack") {
		t.Errorf("caller attributes %v", a)
	}
	if _, ok := a[zapfield.KeyCodeStacktrace]; ok {
		t.Errorf("info carries a stack")
	}
	if s := attrs(recs[1])[zapfield.KeyCodeStacktrace].AsString(); !strings.Contains(s, "TestCallerAndStack") {
		t.Errorf("warn stack %q", s)
	}
	e := attrs(recs[2])
	if s := e[zapfield.KeyExceptionStack].AsString(); !strings.Contains(s, "TestCallerAndStack") {
		t.Errorf("error stack %q", s)
	}
	if _, ok := e[zapfield.KeyCodeStacktrace]; ok {
		t.Errorf("an entry with an error has code.stacktrace too")
	}
}

// nilObject and nilArray dereference their receiver, as most marshalers
// do: a nil pointer of them panics.
type nilObject struct{ n int }

func (o *nilObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddInt("n", o.n)
	return nil
}

type nilArray struct{ n int }

func (a *nilArray) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	enc.AppendInt(a.n)
	return nil
}

type codedError struct{}

func (codedError) Error() string { return "coded" }

func TestErrors(t *testing.T) {
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp)))
	logger.Error("plain", zap.Error(errors.New("boom")))
	logger.Error("typed", zap.Error(&codedError{}))
	logger.Error("joined", zap.Error(errors.Join(errors.New("a"), errors.New("b"))))
	logger.Error("combined", zap.Error(multierr.Combine(errors.New("x"), errors.New("y"))))
	logger.Error("named", zap.NamedError("cause", errors.New("c")))
	logger.With(zap.Error(errors.New("from with"))).Error("with")
	logger.Error("nil", zap.Error(nil))

	recs := c.records()
	check := func(i int, key, want string) {
		t.Helper()
		if got := attrs(recs[i])[key].String(); got != want {
			t.Errorf("record %d %s = %q, want %q", i, key, got, want)
		}
	}
	check(0, zapfield.KeyExceptionMessage, "boom")
	check(0, zapfield.KeyExceptionType, "*errors.errorString")
	check(1, zapfield.KeyExceptionType, "*github.com/zaplens/zaplens.codedError")
	check(2, zapfield.KeyExceptionMessage, "a\nb")
	if _, ok := attrs(recs[2])["errorCauses"]; ok {
		t.Error("errors.Join got errorCauses, which zap does not print for it")
	}
	check(3, zapfield.KeyExceptionMessage, "x; y")
	check(3, "errorCauses", `[{"error":"x"},{"error":"y"}]`)
	check(4, "cause", "c")
	check(5, zapfield.KeyExceptionMessage, "from with")
	if len(attrs(recs[6])) != 0 {
		t.Errorf("zap.Error(nil) left %v", attrs(recs[6]))
	}
}

// A panicking Stringer, marshaler or Error() becomes "<key>Error", as zap
// does, and the rest of the entry arrives.
func TestPanicSafety(t *testing.T) {
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp)))
	var nilPtr *panicStringer
	logger.Info("m",
		zap.Stringer("s", panicStringer{}),
		zap.Stringer("nilptr", nilPtr),
		zap.Object("nilobj", (*nilObject)(nil)),
		zap.Array("nilarr", (*nilArray)(nil)),
		zap.Object("obj", panicMarshaler{}),
		zap.Array("arr", panicArray{}),
		zap.Inline(panicMarshaler{}),
		zap.Error(panicError{}),
		zap.Any("refl", panicJSON{}),
		zap.String("kept", "yes"),
	)
	a := attrs(c.only(t))
	for _, k := range []string{"sError", "objError", "arrError", "Error", "errorError", "reflError"} {
		if !strings.Contains(a[k].AsString(), "boom") {
			t.Errorf("%s = %q, want the panic", k, a[k].AsString())
		}
	}
	if a["nilptr"].AsString() != "<nil>" || a["nilobj"].AsString() != "<nil>" || a["nilarr"].AsString() != "<nil>" || a["kept"].AsString() != "yes" {
		t.Errorf("attributes %v", a)
	}
	if _, ok := a["obj"]; ok {
		t.Errorf("a half-marshaled object was kept: %v", a["obj"])
	}
}

// A panic value is user code too: one whose String panics in turn made
// fmt panic again out of every recover meant to contain the first panic
// (zap's own JSON encoder still does). On a user's provider and on a
// zaplens one, the entry is sent, with the field's panic named by its
// type.
func TestPanicValueWhoseStringPanics(t *testing.T) {
	fields := []zap.Field{zap.Stringer("s", loopPanic{}), zap.Error(loopPanicErr{}), zap.NamedError("cause", loopPanicErr{}),
		zap.Object("o", loopPanicObject{}), zap.String("kept", "yes")}
	const want = "PANIC=zaplens.loopPanic (its String or Error panicked)"
	check := func(t *testing.T, a map[string]attribute.Value) {
		t.Helper()
		for _, k := range []string{"sError", "errorError", "causeError", "oError"} {
			if got := a[k].AsString(); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		if a["kept"].AsString() != "yes" {
			t.Errorf("attributes %v", a)
		}
	}
	t.Run("own provider", func(t *testing.T) {
		c := newCapture(t)
		zap.New(NewCore(WithLoggerProvider(c.lp))).Info("m", fields...)
		check(t, attrs(c.only(t)))
	})
	t.Run("zaplens provider", func(t *testing.T) {
		cleanEnv(t)
		exp := &memExporter{}
		p := newTestProvider(t, withExporter(exp))
		zap.New(NewCore(WithLoggerProvider(p))).Info("m", fields...)
		if err := p.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
		exp.Mu.Lock()
		defer exp.Mu.Unlock()
		if len(exp.Records) != 1 {
			t.Fatalf("%d records, want 1", len(exp.Records))
		}
		a := map[string]attribute.Value{}
		for _, kv := range exp.Records[0].Attributes {
			a[kv.Key] = attribute.StringValue(kv.Value.GetStringValue())
		}
		check(t, a)
	})
	t.Run("panicText", func(t *testing.T) {
		if got := zapfield.PanicText(loopPanic{}); got != "zaplens.loopPanic (its String or Error panicked)" {
			t.Errorf("panicText = %q", got)
		}
		if got := zapfield.PanicText("boom"); got != "boom" {
			t.Errorf("panicText = %q", got)
		}
	})
}

// loopPanic's String panics with a loopPanic.
type loopPanic struct{}

func (loopPanic) String() string { panic(loopPanic{}) }

type loopPanicErr struct{}

func (loopPanicErr) Error() string { panic(loopPanic{}) }

type loopPanicObject struct{}

func (loopPanicObject) MarshalLogObject(zapcore.ObjectEncoder) error { panic(loopPanic{}) }

type panicStringer struct{}

func (panicStringer) String() string { panic("boom") }

type panicMarshaler struct{}

func (panicMarshaler) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("half", "done")
	panic("boom")
}

type panicArray struct{}

func (panicArray) MarshalLogArray(zapcore.ArrayEncoder) error { panic("boom") }

type panicError struct{}

func (panicError) Error() string { panic("boom") }

type panicJSON struct{}

func (panicJSON) MarshalJSON() ([]byte, error) { panic("boom") }

// panicProvider panics in Logger, and its loggers panic in Emit.
type panicProvider struct{ embedded.LoggerProvider }

func (panicProvider) Logger(name string, _ ...log.LoggerOption) log.Logger {
	if name == "bad" {
		panic("boom")
	}
	return panicLogger{}
}

type panicLogger struct{ embedded.Logger }

func (panicLogger) Emit(context.Context, log.Record)                    { panic("boom") }
func (panicLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

func TestProviderPanicsStayInside(t *testing.T) {
	var out lockedBuffer
	defer swapLossOutput(&out)()
	core := NewCore(WithLoggerProvider(panicProvider{}))
	logger := zap.New(core)
	logger.Info("emit panics")
	logger.Named("bad").Info("logger panics")
	if core.Lost() != 1 {
		t.Errorf("Lost = %d, want 1", core.Lost())
	}
	if !strings.Contains(out.String(), "zaplens: 1 entries lost") {
		t.Errorf("loss not told: %q", out.String())
	}
}

func swapLossOutput(w zapcore.WriteSyncer) func() {
	old := lossOutput
	lossOutput = w
	return func() { lossOutput = old }
}

func TestNamespaces(t *testing.T) {
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp))).
		With(zap.String("top", "t"), zap.Namespace("req"), zap.String("id", "r1"))
	logger.With(zap.Namespace("inner"), zap.Int("depth", 2)).
		Error("m", zap.String("call", "c"), zap.Error(errors.New("e")))
	logger.Info("second", zap.Namespace("x"), zap.Int("y", 1))

	recs := c.records()
	a := attrs(recs[0])
	if got := a["req"].String(); got != `{"id":"r1","inner":{"call":"c","depth":2}}` {
		t.Errorf("req = %s", got)
	}
	if a["top"].AsString() != "t" || a[zapfield.KeyExceptionMessage].AsString() != "e" || len(a) != 4 {
		t.Errorf("attributes %v", a)
	}
	if got := attrs(recs[1])["req"].String(); got != `{"id":"r1","x":{"y":1}}` {
		t.Errorf("second req = %s", got)
	}
}

func TestSyncFlushes(t *testing.T) {
	var exp capture
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(
		sdklog.NewBatchProcessor(&exp, sdklog.WithExportInterval(time.Hour))))
	defer lp.Shutdown(context.Background())
	logger := zap.New(NewCore(WithLoggerProvider(lp)))
	logger.Info("queued")
	if n := len(exp.records()); n != 0 {
		t.Fatalf("exported %d before Sync", n)
	}
	if err := logger.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.records()); n != 1 {
		t.Errorf("exported %d after Sync, want 1", n)
	}
}

// stuckProvider never finishes a flush and ignores its context.
type stuckProvider struct{ discardProvider }

func (stuckProvider) ForceFlush(context.Context) error { select {} }

func TestSyncKeepsItsBound(t *testing.T) {
	core := NewCore(WithLoggerProvider(stuckProvider{}), WithFlushTimeout(50*time.Millisecond))
	start := time.Now()
	err := core.Sync()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Sync = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Sync took %v", d)
	}
}

// pointedBack is a logger whose every record fails to export, on an SDK
// provider, with OTel's error handler pointed back at it: handle is given
// the logger and each error. The loss output is swallowed; both are put
// back when the test ends.
func pointedBack(t *testing.T, handle func(logger *zap.Logger, err error)) (*Core, *zap.Logger) {
	var out lockedBuffer
	t.Cleanup(swapLossOutput(&out))
	failing := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(failExporter{})))
	core := NewCore(WithLoggerProvider(failing))
	logger := zap.New(core)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { handle(logger, err) }))
	t.Cleanup(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	return core, logger
}

// An error handler that logs through the bridged logger must not recurse
// without end: the SDK calls it on the emitting goroutine.
func TestErrorHandlerPointedBack(t *testing.T) {
	core, logger := pointedBack(t, func(l *zap.Logger, err error) { l.Error("otel", zap.Error(err)) })
	before := BridgeLost()
	logger.Info("first")
	if core.Lost() == 0 {
		t.Errorf("the recursion was not cut")
	}
	if BridgeLost()-before < core.Lost() {
		t.Errorf("BridgeLost grew by %d, the core lost %d", BridgeLost()-before, core.Lost())
	}
}

type failExporter struct{}

func (failExporter) Export(context.Context, []sdklog.Record) error { return errors.New("down") }
func (failExporter) Shutdown(context.Context) error                { return nil }
func (failExporter) ForceFlush(context.Context) error              { return nil }

func TestConcurrentUse(t *testing.T) {
	c := newCapture(t)
	var out lockedBuffer
	base := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), &out, zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	root := zap.New(NewTee(base, WithLoggerProvider(c.lp)))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			l := root.Named(fmt.Sprintf("g%d", g%3)).With(zap.Int("g", g), Context(ctx))
			for i := range 200 {
				l.Info("m", zap.Int("i", i), zap.Namespace("ns"), zap.String("k", "v"))
			}
		})
	}
	wg.Wait()
	if n := len(c.records()); n != 1600 {
		t.Errorf("got %d records, want 1600", n)
	}
	if n := strings.Count(out.String(), sc.TraceID().String()); n != 1600 {
		t.Errorf("base wrote %d correlated lines, want 1600", n)
	}
}

// lockedBuffer is a WriteSyncer safe for concurrent use.

// OTLP refuses a whole batch over one invalid UTF-8 string, so none may
// leave the bridge: they read as U+FFFD, as in zap's JSON output.
func TestInvalidUTF8(t *testing.T) {
	c := newCapture(t)
	bad := "a\xffb"
	logger := zap.New(NewCore(WithLoggerProvider(c.lp))).Named(bad)
	logger.Error(bad, zap.String(bad, bad), zap.ByteString("bs", []byte(bad)), zap.Strings("ss", []string{bad}),
		zap.Error(errors.New(bad)), zap.Namespace(bad), zap.Any("refl", map[string]string{bad: bad}))

	r := c.only(t)
	var seen []string
	seen = append(seen, r.Body().AsString(), r.InstrumentationScope().Name)
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		seen = append(seen, string(kv.Key), kv.Value.String())
		return true
	})
	for _, s := range seen {
		if !utf8.ValidString(s) {
			t.Errorf("invalid UTF-8 left in %q", s)
		}
	}
	if got := r.Body().AsString(); got != "a\uFFFDb" {
		t.Errorf("body %q", got)
	}
}

// Records leave the bridge with unique keys at every level, so a provider
// may skip the SDK's own pass: the last value wins, at the first's place.
func TestRepeatedKeys(t *testing.T) {
	c := newCapture(t, sdklog.WithAllowKeyDuplication())
	logger := zap.New(NewCore(WithLoggerProvider(c.lp))).With(zap.Int("step", 1), zap.String("phase", "train"))
	logger.Info("m", zap.Int("step", 2), zap.Object("obj", dupObject{}), zap.Namespace("ns"), zap.Int("a", 1), zap.Int("a", 2))

	var keys []string
	r := c.only(t)
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		keys = append(keys, string(kv.Key)+"="+kv.Value.String())
		return true
	})
	want := `[step=2 phase=train obj={"k":"second"} ns={"a":2}]`
	if fmt.Sprint(keys) != want {
		t.Errorf("attributes %v, want %s", keys, want)
	}
}

type dupObject struct{}

func (dupObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("k", "first")
	enc.AddString("k", "second")
	return nil
}

func TestDedupMany(t *testing.T) {
	var kvs []attribute.KeyValue
	for i := range 100 {
		kvs = append(kvs, attribute.Int(fmt.Sprint("k", i%40), i))
	}
	got := otlpwire.Dedup(kvs)
	if len(got) != 40 || got[0].Value.AsInt64() != 80 || got[39].Value.AsInt64() != 79 {
		t.Errorf("dedup of 100 into 40 keys gave %d, first %v, last %v", len(got), got[0], got[len(got)-1])
	}
}

// blockingProvider's loggers hold every Emit until release is closed.
type blockingProvider struct {
	embedded.LoggerProvider
	release chan struct{}
	emitted *atomic.Int64
}

func (p blockingProvider) Logger(string, ...log.LoggerOption) log.Logger {
	return blockingLogger{release: p.release, emitted: p.emitted}
}

type blockingLogger struct {
	embedded.Logger
	release chan struct{}
	emitted *atomic.Int64
}

func (l blockingLogger) Emit(context.Context, log.Record) {
	<-l.release
	l.emitted.Add(1)
}
func (blockingLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

// Many goroutines inside Emit at once are concurrency, not recursion: none
// of their entries may be cut.
func TestManyEmitsInFlightAreNotRecursion(t *testing.T) {
	p := blockingProvider{release: make(chan struct{}), emitted: new(atomic.Int64)}
	core := NewCore(WithLoggerProvider(p))
	logger := zap.New(core)
	const n = 300
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { logger.Info("m") })
	}
	for emitting.Load() < n && core.Lost() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(p.release)
	wg.Wait()
	if core.Lost() != 0 || p.emitted.Load() != n {
		t.Errorf("lost %d, emitted %d of %d", core.Lost(), p.emitted.Load(), n)
	}
}

// The last zap.Error wins, as any repeated key does.
func TestErrorLastWins(t *testing.T) {
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp))).With(zap.Error(errors.Join(errors.New("old"), errors.New("older"))))
	logger.Info("m", zap.Error(errors.New("new")))
	a := attrs(c.only(t))
	if a[zapfield.KeyExceptionMessage].AsString() != "new" || a["error"].Type() != 0 || a["errorCauses"].Type() != 0 {
		t.Errorf("attributes %v, want only the new error", a)
	}
}

type offProvider struct {
	embedded.LoggerProvider
	emits *atomic.Int64
}

func (p offProvider) Logger(string, ...log.LoggerOption) log.Logger { return offLogger{emits: p.emits} }

type offLogger struct {
	embedded.Logger
	emits *atomic.Int64
}

func (l offLogger) Emit(context.Context, log.Record)                  { l.emits.Add(1) }
func (offLogger) Enabled(context.Context, log.EnabledParameters) bool { return false }

type countingStringer struct{ n *int }

func (s countingStringer) String() string { *s.n++; return "x" }

// A logger that says it is disabled (no provider set, one shut down, a
// processor's filter) gets nothing, and nothing is converted for it.
func TestDisabledLoggerConvertsNothing(t *testing.T) {
	var emits atomic.Int64
	n := 0
	logger := zap.New(NewCore(WithLoggerProvider(offProvider{emits: &emits})))
	logger.Info("m", zap.Stringer("s", countingStringer{&n}))
	if emits.Load() != 0 || n != 0 {
		t.Errorf("disabled logger: %d emits, Stringer called %d times", emits.Load(), n)
	}
}

func TestSeverityOfCustomLevels(t *testing.T) {
	if got := severity(zapcore.DebugLevel - 1); got != log.SeverityTrace {
		t.Errorf("below Debug: %v", got)
	}
	if got := severity(zapcore.FatalLevel + 1); got != log.SeverityFatal4 {
		t.Errorf("above Fatal: %v", got)
	}
}

// The same, from an error handler that logs back from deep in its own
// calls: the guard looks at the whole stack, whatever its depth.
func TestErrorHandlerPointedBackFromDeep(t *testing.T) {
	core, logger := pointedBack(t, func(l *zap.Logger, err error) { deepLog(200, l, err) })
	logger.Info("first")
	if core.Lost() == 0 {
		t.Errorf("the recursion was not cut")
	}
}

//go:noinline
func deepLog(depth int, logger *zap.Logger, err error) {
	if depth > 0 {
		deepLog(depth-1, logger, err)
		return
	}
	logger.Error("otel", zap.Error(err))
}

// stuckFlusher's ForceFlush ignores its context and returns only when
// released.
type stuckFlusher struct {
	discardProvider
	release chan struct{}
	calls   atomic.Int32
}

func (s *stuckFlusher) ForceFlush(context.Context) error {
	s.calls.Add(1)
	<-s.release
	return nil
}

// Sync against a provider that ignores its flush's context: each call
// returns within its bound, and no more than two flushes are ever started
// while the first is stuck, however many calls wait.
func TestSyncAgainstStuckFlushHoldsNoGoroutines(t *testing.T) {
	p := &stuckFlusher{release: make(chan struct{})}
	logger := zap.New(NewCore(WithLoggerProvider(p), WithFlushTimeout(5*time.Millisecond)))
	before := runtime.NumGoroutine()
	for range 200 {
		if err := logger.Sync(); err == nil {
			t.Fatal("a stuck flush reported success")
		}
	}
	if n := runtime.NumGoroutine() - before; n > 2 {
		t.Errorf("%d goroutines left by 200 Sync calls, want at most 2", n)
	}
	if c := p.calls.Load(); c != 1 {
		t.Errorf("%d flushes started while the first is stuck, want 1", c)
	}
	close(p.release)
}
