package zaplens

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"go.uber.org/multierr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/zapfield"
	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// The differential test: the same input goes through the OTel SDK's own
// pipeline (sdk/log, batch processor, otlploggrpc) to one real OTLP/gRPC
// receiver, and through ours (otlplog.NewLoggerProvider: otlpwire, pipeline,
// transport) to another, and what the two receivers decode must be equal,
// record by record, scope by scope, resource included. The input is both
// what the bridge makes of zap entries (internal/zapfield's direct and general ways against
// fillRecord) and records emitted straight to each provider's loggers
// (logger.go's Emit against the SDK's).
//
// Deliberate differences, left out of the compared input on purpose:
//
//   - Invalid UTF-8 in what is emitted straight to a provider (body,
//     severity text, event name, keys, string values, scope name, version,
//     schema URL or attributes, resource): the SDK passes it on raw, and
//     protobuf-go refuses to marshal it, so the SDK's whole export fails
//     (a collector would refuse the request too); ours replaces it with
//     U+FFFD and the batch goes through. Through the bridge both sides get
//     valid strings (the bridge replaces invalid UTF-8 itself), so invalid
//     UTF-8 in zap messages, keys, values and logger names IS compared.
//   - Errors whose Error method panics, passed to Record.SetErr: the SDK's
//     Emit panics in the caller; ours derives what it can. (Through the
//     bridge, panicking errors, stringers and marshalers are compared.)
//   - More than 4096 distinct scopes: ours folds the rest into the
//     zaplens.overflow scope; the SDK keeps every one.
//   - A record larger than a request may be (3 MiB by default): ours cuts
//     its longest values and marks it zaplens.cut; the SDK sends it whole
//     and a collector refuses the request.
//   - The observed timestamp the input leaves unset: the SDK sets it to
//     the time of Emit, our Emit too, but our bridge takes zap's entry
//     time, read a moment before (wire.go's setWireRecord). diffNormalize
//     checks that each side set it so, then leaves it out.
//
// Everything else, depth 64 and beyond included, is compared.

// diffService names the service on both sides.
const diffService = "zaplens-differential"

// diffResourceAttrs are extra resource attributes, of every simple kind.
var diffResourceAttrs = []attribute.KeyValue{
	attribute.String("deployment.environment.name", "test"),
	attribute.Int64("diff.int", -7),
	attribute.Float64("diff.float", 0.25),
	attribute.Bool("diff.bool", true),
	attribute.StringSlice("diff.strings", []string{"a", "", "ü"}),
	attribute.Int64Slice("diff.ints", []int64{1, -1}),
}

// diffPair is the SDK's pipeline and ours, each to its own receiver.
type diffPair struct {
	sdk, ours *otlpServer
	sdkP      *sdklog.LoggerProvider
	ourP      *otlplog.LoggerProvider
	start     time.Time
}

func newDiffPair(tb testing.TB) *diffPair {
	return newDiffPairWith(tb, defaultDiffSetup(tb))
}

// diffSetup is what a differential test adds to each side: the SDK's
// provider options and processors (which see each record before the batch
// processor does), and our provider's options.
type diffSetup struct {
	sdk        []sdklog.LoggerProviderOption
	processors []sdklog.Processor
	ours       []otlplog.Option
}

// defaultDiffSetup gives both sides the same resource, detected as a
// provider detects one (host, process, SDK) and with extra attributes of
// every simple kind, and the SDK procs before its batch processor, as a
// user of sdk/log puts them. How ours builds a resource from its options
// and the environment is otlplog's resource tests' to hold to the SDK.
func defaultDiffSetup(tb testing.TB, procs ...sdklog.Processor) diffSetup {
	tb.Helper()
	res, err := resource.New(context.Background(), resource.WithTelemetrySDK(), resource.WithHost(),
		resource.WithOSType(), resource.WithProcessPID(), resource.WithProcessExecutableName(),
		resource.WithAttributes(append([]attribute.KeyValue{attribute.String("service.name", diffService)}, diffResourceAttrs...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return diffSetup{
		sdk:        []sdklog.LoggerProviderOption{sdklog.WithResource(res)},
		processors: procs,
		ours:       []otlplog.Option{otlplog.WithResource(res)},
	}
}

func newDiffPairWith(tb testing.TB, setup diffSetup) *diffPair {
	tb.Helper()
	ctx := context.Background()
	p := &diffPair{
		sdk:   startOTLPServer(tb, "127.0.0.1:0", keepRecords()),
		ours:  startOTLPServer(tb, "127.0.0.1:0", keepRecords()),
		start: time.Now(),
	}
	p.sdkP = newDiffSDKProvider(tb, p.sdk.Addr, setup)
	var err error
	p.ourP, err = otlplog.NewLoggerProvider(ctx, append([]otlplog.Option{
		otlplog.WithEndpoint("http://" + p.ours.Addr),
		otlplog.WithLossWriter(nil),
		// Exports only when flushed, so that each side sends its records
		// in the same requests, whatever the timing of the two runs.
		otlplog.WithScheduleDelay(time.Hour),
		otlplog.WithRequestBytes(8 << 20)}, setup.ours...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = shutdownWithin(p.ourP, 5*time.Second) })
	return p
}

// newDiffSDKProvider is the SDK's pipeline to addr: setup's processors,
// then a batch processor with otlploggrpc, and setup's options.
func newDiffSDKProvider(tb testing.TB, addr string, setup diffSetup) *sdklog.LoggerProvider {
	tb.Helper()
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithEndpoint(addr), otlploggrpc.WithInsecure())
	if err != nil {
		tb.Fatal(err)
	}
	var opts []sdklog.LoggerProviderOption
	for _, proc := range setup.processors {
		opts = append(opts, sdklog.WithProcessor(proc))
	}
	opts = append(opts, sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	lp := sdklog.NewLoggerProvider(append(opts, setup.sdk...)...)
	tb.Cleanup(func() { _ = shutdownWithin(lp, 5*time.Second) })
	return lp
}

// diffSide is one pipeline, as the test drives it.
type diffSide struct {
	name     string
	provider log.LoggerProvider
}

func (p *diffPair) sides() []diffSide {
	return []diffSide{{"sdk", p.sdkP}, {"zaplens", p.ourP}}
}

// flush exports everything both providers hold.
func (p *diffPair) flush(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.sdkP.ForceFlush(ctx); err != nil {
		tb.Fatalf("sdk ForceFlush: %v", err)
	}
	if err := p.ourP.ForceFlush(ctx); err != nil {
		tb.Fatalf("zaplens ForceFlush: %v", err)
	}
}

// take returns, and forgets, what each receiver got so far.
func (p *diffPair) take() (sdk, ours []*logpb.ResourceLogs) {
	return diffTake(p.sdk), diffTake(p.ours)
}

func diffTake(s *otlpServer) []*logpb.ResourceLogs {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	r := s.Received
	s.Received = nil
	return r
}

// drive gives each side, the SDK's first, the two bridges of
// newDiffBridges on its provider, each with a clock of its own, and syncs
// them once script has logged: the same input to both sides. It returns
// what each side's tee base printed.
func (p *diffPair) drive(script func(b diffBridges, provider log.LoggerProvider)) (bases []string) {
	for _, s := range p.sides() {
		b := newDiffBridges(s.provider, newDiffClock())
		script(b, s.provider)
		_ = b.core.Sync()
		_ = b.tee.Sync()
		bases = append(bases, b.base.buf.String())
	}
	return bases
}

// compare flushes both sides, takes what each receiver got and compares
// the two (diffCompare, with the records sent from from on). It returns
// how many records it compared, the report of the differences ("" when
// there are none) and what our receiver got.
func (p *diffPair) compare(tb testing.TB, from time.Time, bridged func(*commonpb.InstrumentationScope) bool) (n int, report string, ours []*logpb.ResourceLogs) {
	tb.Helper()
	p.flush(tb)
	end := time.Now()
	sdk, ours := p.take()
	n, report = diffCompare(sdk, ours, from, end, bridged)
	return n, report, ours
}

// diffClock is zap's clock for one side: both sides see the same times,
// one per entry, each a millisecond and 7ns after the last.
type diffClock struct {
	mu sync.Mutex
	t  time.Time
}

var diffEpoch = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// beyondInt32 is a severity no int32 holds; a variable, so that the test
// compiles on 32 bits, where it wraps.
var beyondInt32 int64 = math.MaxInt32 + 1

func newDiffClock() *diffClock { return &diffClock{t: diffEpoch} }

func (c *diffClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond + 7)
	return c.t
}

func (c *diffClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// diffBridges are the two ways the bridge is built, on one provider.
type diffBridges struct {
	core *zap.Logger // NewCore alone
	tee  *zap.Logger // NewTee with a JSON base
	base *jsonBase
}

func newDiffBridges(p log.LoggerProvider, clock zapcore.Clock, more ...Option) diffBridges {
	opts := append([]Option{WithLoggerProvider(p), WithLevel(zapcore.Level(math.MinInt8))}, more...)
	zopts := []zap.Option{zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel), zap.WithClock(clock), zap.ErrorOutput(zapcore.AddSync(io.Discard))}
	base := newJSONBase(zapcore.DebugLevel)
	return diffBridges{
		core: zap.New(NewCore(opts...), zopts...),
		tee:  zap.New(NewTee(diffRecoverCore{base.core}, append(opts, WithDefaultScope("zaplens.tee"))...), zopts...),
		base: base,
	}
}

// diffRecoverCore is the tee's base: zap's JSON encoder, which lets a
// panicking marshaler's panic through, made to drop that entry (or those
// With fields) instead.
type diffRecoverCore struct{ zapcore.Core }

func (c diffRecoverCore) With(fields []zapcore.Field) (with zapcore.Core) {
	defer func() {
		if recover() != nil {
			with = c
		}
	}()
	return diffRecoverCore{c.Core.With(fields)}
}

func (c diffRecoverCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c diffRecoverCore) Write(ent zapcore.Entry, fields []zapcore.Field) (err error) {
	defer func() { _ = recover() }()
	return c.Core.Write(ent, fields)
}

// diffSpans are two real spans, one sampled and one not.
type diffSpans struct {
	sampled, unsampled context.Context
}

func newDiffSpans(tb testing.TB) diffSpans {
	sampled, _ := spanContext(tb)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	unsampled, span := tp.Tracer("test").Start(context.Background(), "unsampled")
	tb.Cleanup(func() { span.End() })
	if !trace.SpanContextFromContext(unsampled).IsValid() || trace.SpanContextFromContext(unsampled).IsSampled() {
		tb.Fatal("the unsampled span is not what the test needs")
	}
	return diffSpans{sampled: sampled, unsampled: unsampled}
}

func TestWireMatchesSDK(t *testing.T) {
	cleanEnv(t)
	pair := newDiffPair(t)
	spans := newDiffSpans(t)
	bases := pair.drive(func(b diffBridges, p log.LoggerProvider) {
		diffScript(b.core, spans)
		diffScript(b.tee, spans)
		diffDirect(p, spans)
	})
	n, report, _ := pair.compare(t, pair.start, diffBridgedScope)
	if bases[0] != bases[1] {
		t.Errorf("the two sides' base cores printed different lines: the input was not the same\n%s", diffLines(bases[0], bases[1]))
	}
	if report != "" {
		t.Fatal(report)
	}
	if n < 100 {
		t.Fatalf("only %d records compared", n)
	}
	t.Logf("%d records compared, equal", n)
}

// diffBridgedScope tells the scopes of diffScript's records, which came
// through the bridge, from those of the records diffDirect emits (under a
// version, or named direct...).
func diffBridgedScope(s *commonpb.InstrumentationScope) bool {
	return s.GetVersion() == "" && !strings.HasPrefix(s.GetName(), "direct")
}

// diffScript logs the same entries to whichever side l belongs to: every
// field kind of the README's table, With chains, named loggers, errors with
// stacks, invalid UTF-8, panicking user code, nil values, contexts. It is
// one function so that both sides have the same callers and stacks.
func diffScript(l *zap.Logger, spans diffSpans) {
	l.Info("every field kind", diffEveryField()...)
	l.Info("values json prints badly", fieldtest.KeptValueFields()...)

	// With chains, a namespace left open by With, repeated keys.
	w := l.With(zap.String("w1", "a"), zap.Int("dup", 1)).
		With(zap.String("w2", "b"), zap.Namespace("wns"), zap.Int("w3", 3))
	w.Warn("with chain", zap.String("call", "c"), zap.Int("w3", 33), zap.Namespace("deeper"), zap.Bool("x", true))
	w.With(zap.Namespace("again"), zap.String("k", "v")).Info("namespaces through With", zap.String("k", "w"))
	l.With(zap.String("dup", "with")).Info("repeats", zap.String("dup", "call"), zap.Int("dup", 3), zap.Object("o", diffObject{name: "x", n: 1}), zap.Object("o", diffObject{name: "y", n: 2}))

	// Several scopes interleaved.
	a, b := l.Named("alpha"), l.Named("beta")
	ag := a.Named("gamma")
	for i := range 3 {
		a.Info("alpha", zap.Int("i", i))
		b.Debug("beta", zap.Int("i", i))
		ag.Warn("alpha.gamma", zap.Int("i", i))
		l.Info("root", zap.Int("i", i))
	}

	// Levels, custom ones too; DPanic flushes inside Write.
	l.Debug("debug")
	l.Log(zapcore.Level(-3), "below debug")
	l.Log(zapcore.Level(9), "above fatal")
	l.DPanic("dpanic", zap.Int("n", 1))

	// Errors, with stacks (AddStacktrace(Error)).
	wrapped := fmt.Errorf("wrap: %w", &diffTypedErr{code: 7})
	l.Error("failed", zap.Error(wrapped), zap.Int("attempt", 3))
	l.Error("no error field: code.stacktrace")
	l.With(zap.Error(diffCodedErr{})).Error("error from With: exception.stacktrace")
	l.Warn("two errors, the last wins", zap.Error(errors.New("first")), zap.Error(&diffTypedErr{code: 2}))
	l.Info("error kinds",
		zap.NamedError("joined", errors.Join(errors.New("j1"), nil, &diffTypedErr{code: 3})),
		zap.NamedError("multi", multierr.Combine(errors.New("m1"), errors.New("m2"))),
		zap.NamedError("formatted", diffFormatterErr{msg: "formatted"}),
		zap.NamedError("nilptr", (*diffTypedErr)(nil)),
		zap.Errors("errs", []error{errors.New("e1"), &diffTypedErr{code: 4}}),
	)
	l.Error("multierr as zap.Error", zap.Error(multierr.Combine(errors.New("m1"), diffFormatterErr{msg: "m2"})))
	l.Error("formatter as zap.Error", zap.Error(diffFormatterErr{msg: "pkg/errors-like"}))
	l.Error("nil pointer error", zap.Error((*diffTypedErr)(nil)))

	// Invalid UTF-8 everywhere the bridge takes a string.
	bad := l.Named("bad\xffname").With(zap.String("with\xfekey", "with\xfdvalue"))
	bad.Info("bad \xff message", zap.String("k\xff", "v\xc3\x28"), zap.ByteString("bs\xff", []byte{'a', 0xff}),
		zap.Strings("ss", []string{"ok", "\xff"}), zap.Stringer("st", diffStringer("s\xff")),
		zap.Reflect("r", map[string]string{"\xff": "\xfe"}), zap.NamedError("ne\xff", errors.New("e\xff")),
		zap.Object("obj\xff", diffObject{name: "n\xff"}), zap.Namespace("ns\xff"), zap.String("in", "x"))
	bad.Error("bad error", zap.Error(errors.New("bad \xff error")))

	// User code that panics or fails, and nil values.
	l.Info("bad user code",
		zap.Stringer("panics", diffPanicStringer{}),
		zap.Stringer("nilptr", (*diffPtrStringer)(nil)),
		zap.Object("panicobj", diffPanicObject{}),
		zap.Array("panicarr", diffPanicArray{}),
		zap.Object("failobj", diffFailObject{}),
		zap.Error(diffPanicErr{}),
		zap.NamedError("panicnamed", diffPanicErr{}),
		zap.Reflect("panicjson", diffPanicJSON{}),
		zap.Reflect("cyclic", diffCyclic()),
		zap.Any("nil", nil),
		zap.Reflect("nilmap", map[string]int(nil)),
		zap.Reflect("nilptr2", (*int)(nil)),
		zap.Binary("nilbin", nil),
		zap.Strings("nilstrings", nil),
		zap.Error(nil),
		zap.Stringer("nilstringer", nil),
		zap.Object("nilobject", nil),
	)

	// Contexts: per entry, from With, the entry's winning, the official
	// bridge's way, and one that is no span.
	l.Info("sampled", Context(spans.sampled))
	l.Info("unsampled", Context(spans.unsampled))
	wc := l.With(Context(spans.sampled), zap.String("after", "ctx"))
	wc.Info("context from With")
	wc.Warn("entry context wins", Context(spans.unsampled))
	l.Info("official bridge's way", zap.Any("ctx", spans.sampled))
	l.Info("no span", Context(context.Background()))

	// Event names: the record's, not an attribute; from With, the
	// entry's winning; beside a string field of the same key.
	l.Info("event", EventName("app.started"), zap.Int("n", 1))
	ew := l.With(EventName("from.with"), zap.String("w", "x"))
	ew.Info("event from With")
	ew.Warn("entry's event wins", EventName("entry"), Context(spans.sampled), zap.String(eventNameKey, "an attribute"))
	l.With(EventName("only")).Error("event, error", zap.Error(errors.New("boom")), EventName("bad\xffevent"))

	// Many fields: past the count limit, with the bridge's own last.
	many := make([]zap.Field, 0, 150)
	for i := range 150 {
		many = append(many, zap.Int(fmt.Sprintf("f%03d", i), i))
	}
	l.Error("150 fields", append(many, zap.Error(errors.New("past the limit")))...)
	l.Info("127 fields", many[:127]...)

	// Deep structures: 60 and 70 levels of objects (the SDK's depth
	// limit is 64), and lengths around varint boundaries.
	l.Info("deep", zap.Object("d60", diffDeep(60)), zap.Object("d70", diffDeep(70)))
	l.Info("lengths", zap.String("s127", strings.Repeat("a", 127)), zap.String("s128", strings.Repeat("b", 128)),
		zap.String("s16383", strings.Repeat("c", 16383)), zap.String("s16384", strings.Repeat("d", 16384)),
		zap.Binary("b200", make([]byte, 200)))
	l.Info(strings.Repeat("m", 2_100_000)) // a body past 2 MiB: a four-byte length
	l.Info("")
}

// diffEveryField is one field of each kind in the README's table, and then
// some.
func diffEveryField() []zap.Field {
	n := 5
	return []zap.Field{
		zap.Int("int", -42), zap.Int8("int8", math.MinInt8), zap.Int16("int16", math.MaxInt16),
		zap.Int32("int32", math.MinInt32), zap.Int64("int64", math.MinInt64),
		zap.Uint("uint", 7), zap.Uint8("uint8", math.MaxUint8), zap.Uint16("uint16", math.MaxUint16),
		zap.Uint32("uint32", math.MaxUint32), zap.Uintptr("uintptr", 0xdeadbeef),
		zap.Uint64("uint64.maxint", math.MaxInt64), zap.Uint64("uint64.above", math.MaxInt64+1),
		zap.Uint64("uint64.max", math.MaxUint64),
		zap.Float64("float64", 0.41), zap.Float64("nan", math.NaN()), zap.Float64("inf", math.Inf(-1)),
		zap.Float64("negzero", math.Copysign(0, -1)), zap.Float64("tiny", math.SmallestNonzeroFloat64),
		zap.Float32("float32", 0.1), zap.Float32("float32.max", math.MaxFloat32),
		zap.Complex64("complex64", 1-2i), zap.Complex128("complex128", complex(math.Inf(1), math.NaN())),
		zap.Bool("true", true), zap.Bool("false", false),
		zap.String("string", "héllo ☃"), zap.String("empty", ""),
		zap.ByteString("bytestring", []byte("raw bytes")), zap.Stringer("stringer", diffStringer("I am a stringer")),
		zap.Binary("binary", []byte{0, 1, 0xff}), zap.Binary("binary.empty", []byte{}),
		zap.Duration("duration", 1500*time.Millisecond), zap.Duration("duration.neg", -time.Nanosecond),
		zap.Time("time", time.Date(2024, 2, 29, 13, 14, 15, 123456789, time.FixedZone("X", 5*3600+1800))),
		zap.Time("time.utc", time.Unix(0, 0).UTC()), zap.Time("time.zero", time.Time{}),
		zap.Object("object", diffObject{name: "outer", n: 1, tags: []string{"a", "b"}, child: &diffObject{name: "inner", n: 2}}),
		zap.Array("array", diffArray{}),
		zap.Ints("ints", []int{1, 2, 3}), zap.Strings("strings", []string{"x", "", "y"}),
		zap.Bools("bools", []bool{true, false}), zap.Float64s("float64s", []float64{0.5, math.Inf(1)}),
		zap.Float32s("float32s", []float32{0.1, 0.2}), zap.Uint64s("uint64s", []uint64{1, math.MaxUint64}),
		zap.Durations("durations", []time.Duration{time.Second}), zap.Times("times", []time.Time{diffEpoch}),
		zap.Int64s("int64s.empty", []int64{}),
		zap.Objects("objects", []diffObject{{name: "o1"}, {name: "o2", n: 2}}),
		zap.Inline(diffObject{name: "inlined", n: 9}),
		zap.Reflect("reflect.map", map[string]any{"b": 1, "a": []any{1.5, "x", nil, true, 2.0}, "n": map[string]int{"z": 1}, "big": uint64(math.MaxUint64)}),
		zap.Reflect("reflect.struct", diffStruct{A: 1, B: "b", C: []float64{0.1, 1e300}, D: map[string]bool{"t": true}, E: &n}),
		zap.Reflect("reflect.slice", []any{1, "two", []int{3}, map[string]any{}, nil}),
		zap.Reflect("reflect.scalar", 12.5),
		zap.Any("any.int", 5), zap.Any("any.strings", []string{"p", "q"}), zap.Any("any.bytes", []byte("by")),
		zap.Any("any.struct", diffStruct{B: "any"}), zap.Any("any.duration", time.Minute),
		zap.Skip(),
		zap.Error(fmt.Errorf("outer: %w", &diffTypedErr{code: 1})),
		zap.NamedError("cause", diffFormatterErr{msg: "cause"}),
		zap.Namespace("ns"), zap.String("in.ns", "inside"), zap.Int("int", 1),
	}
}

// diffDirect emits records straight to p's loggers, every attribute.Value
// kind and record field, through scopes with versions, schemas and
// attributes. It builds the records afresh for each side.
func diffDirect(p log.LoggerProvider, spans diffSpans) {
	ctx := context.Background()
	plain := p.Logger("direct")
	full := p.Logger("direct",
		log.WithInstrumentationVersion("1.2.3"),
		log.WithSchemaURL("https://opentelemetry.io/schemas/1.26.0"),
		log.WithInstrumentationAttributes(
			attribute.String("lib", "x"), attribute.Int("n", 1), attribute.Int("n", 2),
			attribute.StringSlice("list", []string{"a"}),
		))
	// Scope attributes the SDK tidies: an empty key (left out), a map
	// with repeated keys (made unique), a value past the depth limit.
	tidied := p.Logger("direct.tidied", log.WithInstrumentationAttributes(
		attribute.String("", "no key"),
		attribute.KeyValue{Key: "m", Value: attribute.MapValue(attribute.Int("a", 1), attribute.Int("a", 2))},
		attribute.KeyValue{Key: "deep", Value: diffDeepValue(66, attribute.MAP)},
	))
	versionOnly := p.Logger("", log.WithInstrumentationVersion("0.0.1"))
	ts := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	observed := time.Date(2001, 9, 9, 1, 46, 40, 0, time.UTC)

	rec := func(body attribute.Value, attrs ...attribute.KeyValue) log.Record {
		var r log.Record
		r.SetTimestamp(ts)
		r.SetSeverity(log.SeverityInfo)
		r.SetSeverityText("INFO")
		r.SetBody(body)
		r.AddAttributes(attrs...)
		return r
	}
	str := attribute.StringValue

	// Every value kind.
	everyKind := []attribute.KeyValue{
		attribute.Bool("bool", true),
		attribute.Int64("int64", math.MinInt64),
		attribute.Float64("float64", math.Inf(1)),
		attribute.Float64("nan", math.NaN()),
		attribute.String("string", "s"),
		attribute.String("empty.string", ""),
		{Key: "bytes", Value: attribute.ByteSliceValue([]byte{0, 0xff})},
		{Key: "bytes.empty", Value: attribute.ByteSliceValue(nil)},
		attribute.BoolSlice("bools", []bool{true, false}),
		attribute.Int64Slice("int64s", []int64{-1, 0, 1}),
		attribute.Float64Slice("float64s", []float64{0.1, math.NaN()}),
		attribute.StringSlice("strings", []string{"a", ""}),
		attribute.StringSlice("strings.empty", nil),
		{Key: "slice", Value: attribute.SliceValue(attribute.IntValue(1), str("two"), attribute.Value{},
			attribute.SliceValue(attribute.BoolValue(false)), attribute.MapValue(attribute.String("k", "v")),
			attribute.ByteSliceValue([]byte("b")), attribute.Int64SliceValue([]int64{3}))},
		{Key: "slice.empty", Value: attribute.SliceValue()},
		{Key: "map", Value: attribute.MapValue(
			attribute.String("z", "last"), attribute.Int("a", 1),
			attribute.KeyValue{Key: "nested", Value: attribute.MapValue(
				attribute.Int("dup", 1), attribute.Int("x", 0), attribute.Int("dup", 2),
				attribute.KeyValue{Key: "deeper", Value: attribute.MapValue(attribute.Bool("dup", true), attribute.Bool("dup", false))},
			)},
			attribute.KeyValue{Key: "list", Value: attribute.SliceValue(attribute.MapValue(attribute.Int("d", 1), attribute.Int("d", 2)))},
			attribute.KeyValue{Key: "", Value: str("empty key in a map")},
			attribute.KeyValue{Key: "empty", Value: attribute.Value{}},
		)},
		{Key: "map.empty", Value: attribute.MapValue()},
		{Key: "emptyvalue", Value: attribute.Value{}},
	}
	plain.Emit(ctx, rec(str("every kind"), everyKind...))
	full.Emit(ctx, rec(str("every kind, full scope"), everyKind...))
	versionOnly.Emit(ctx, rec(str("empty scope name")))
	tidied.Emit(ctx, rec(str("tidied scope")))

	// Repeated keys at the top and in nested maps; an empty key, which
	// the SDK leaves out.
	plain.Emit(ctx, rec(str("repeats"),
		attribute.Int("k", 1), attribute.String("x", "x"), attribute.Int("k", 2),
		attribute.KeyValue{Key: "", Value: str("no key")},
		attribute.KeyValue{Key: "m", Value: attribute.MapValue(attribute.Int("a", 1))},
		attribute.KeyValue{Key: "m", Value: attribute.MapValue(attribute.Int("b", 1), attribute.Int("b", 2))},
		attribute.Int("k", 3)))

	// Errors: derived exception attributes, a supplied one suppressing
	// only its own derivation, an ErrorType method, an empty message.
	for _, c := range []struct {
		err   error
		attrs []attribute.KeyValue
	}{
		{err: fmt.Errorf("wrap: %w", &diffTypedErr{code: 5})},
		{err: fmt.Errorf("wrap nil: %w", nil)},
		{err: errors.New("plain")},
		{err: diffCodedErr{}},
		{err: errors.New(""), attrs: []attribute.KeyValue{attribute.String("a", "b")}},
		{err: errors.New("has message"), attrs: []attribute.KeyValue{attribute.String(zapfield.KeyExceptionMessage, "given")}},
		{err: errors.New("has type"), attrs: []attribute.KeyValue{attribute.String(zapfield.KeyExceptionType, "given")}},
		{err: diffFormatterErr{msg: "formatter"}},
		{err: multierr.Combine(errors.New("m1"), errors.New("m2"))},
		{err: errors.Join(errors.New("j1"), errors.New("j2"))},
	} {
		r := rec(str("with error"), c.attrs...)
		r.SetSeverity(log.SeverityError)
		r.SetErr(c.err)
		plain.Emit(ctx, r)
	}

	// Event name, observed timestamp set, other timestamps.
	r := rec(str("event"), attribute.String("e", "1"))
	r.SetEventName("app.started")
	r.SetObservedTimestamp(observed)
	plain.Emit(ctx, r)
	for _, tt := range []time.Time{{}, time.Unix(-5, 0), time.Unix(0, 1), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)} {
		r := rec(str("timestamps"))
		r.SetTimestamp(tt)
		r.SetObservedTimestamp(tt.Add(time.Hour))
		plain.Emit(ctx, r)
	}
	r = rec(str("no timestamp"))
	r.SetTimestamp(time.Time{})
	plain.Emit(ctx, r)

	// Every severity, and some no severity number names.
	for _, s := range []log.Severity{-1, log.SeverityUndefined, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 100, log.Severity(beyondInt32)} {
		r := rec(str("severity"))
		r.SetSeverity(s)
		r.SetSeverityText(fmt.Sprint(s))
		plain.Emit(ctx, r)
	}

	// Bodies of each kind; maps with repeated keys, at any depth, in the body.
	for _, body := range []attribute.Value{
		{}, str(""), attribute.BoolValue(true), attribute.Int64Value(-1), attribute.Float64Value(2.5),
		attribute.ByteSliceValue([]byte("body")), attribute.StringSliceValue([]string{"a", "b"}),
		attribute.Int64SliceValue([]int64{1}), attribute.Float64SliceValue([]float64{1.5}), attribute.BoolSliceValue([]bool{true}),
		attribute.SliceValue(str("x"), attribute.MapValue(attribute.Int("k", 1), attribute.Int("k", 2))),
		attribute.MapValue(attribute.Int("k", 1), attribute.KeyValue{Key: "m", Value: attribute.MapValue(attribute.Int("j", 1), attribute.Int("j", 2))}, attribute.Int("k", 2)),
		diffDeepValue(80, attribute.MAP),
	} {
		plain.Emit(ctx, rec(body))
	}

	// The count limit (128): past it, with repeats past it, and with an
	// error to derive at and around it.
	for _, c := range []struct {
		n, repeats int
		err        error
	}{
		{n: 200}, {n: 128}, {n: 129}, {n: 140, repeats: 5},
		{n: 127, err: errors.New("one slot left")}, {n: 128, err: errors.New("no slot left")},
		{n: 126, err: errors.New("two slots left")}, {n: 130, repeats: 3, err: errors.New("past")},
	} {
		attrs := make([]attribute.KeyValue, 0, c.n+c.repeats)
		for i := range c.n {
			attrs = append(attrs, attribute.Int(fmt.Sprintf("a%03d", i), i))
		}
		for i := range c.repeats {
			// The first repeats a kept key; the others keys past the limit.
			k := 0
			if i > 0 {
				k = c.n - i
			}
			attrs = append(attrs, attribute.String(fmt.Sprintf("a%03d", k), "again"))
		}
		r := rec(str(fmt.Sprintf("%d attributes, %d repeated", c.n, c.repeats)), attrs...)
		r.SetErr(c.err)
		plain.Emit(ctx, r)
	}

	// Depth: a value 64 levels deep keeps all of them; deeper ones lose
	// what is past the 64th, maps, slices and primitive slices alike.
	plain.Emit(ctx, rec(str("depth"),
		attribute.KeyValue{Key: "m63", Value: diffDeepValue(63, attribute.MAP)},
		attribute.KeyValue{Key: "m64", Value: diffDeepValue(64, attribute.MAP)},
		attribute.KeyValue{Key: "m65", Value: diffDeepValue(65, attribute.MAP)},
		attribute.KeyValue{Key: "s64", Value: diffDeepValue(64, attribute.SLICE)},
		attribute.KeyValue{Key: "s65", Value: diffDeepValue(65, attribute.SLICE)},
		attribute.KeyValue{Key: "s70", Value: diffDeepValue(70, attribute.SLICE)},
		attribute.KeyValue{Key: "b64", Value: diffDeepValue(64, attribute.BYTESLICE)},
		attribute.KeyValue{Key: "b65", Value: diffDeepValue(65, attribute.BYTESLICE)},
		attribute.KeyValue{Key: "i65", Value: diffDeepValue(65, attribute.INT64SLICE)},
	))

	// Span contexts: sampled, unsampled, and flags beyond sampled.
	plain.Emit(spans.sampled, rec(str("sampled span")))
	plain.Emit(spans.unsampled, rec(str("unsampled span")))
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: 0xff, Remote: true,
	})
	plain.Emit(trace.ContextWithRemoteSpanContext(ctx, sc), rec(str("all flags")))
	onlyFlags := trace.NewSpanContext(trace.SpanContextConfig{TraceFlags: trace.FlagsSampled})
	plain.Emit(trace.ContextWithSpanContext(ctx, onlyFlags), rec(str("flags without ids")))

	// Long strings, and an empty record.
	plain.Emit(ctx, rec(str(strings.Repeat("é", 9000)), attribute.String("long", strings.Repeat("x", 20000))))
	plain.Emit(ctx, log.Record{})
}

// diffDeepValue is a value nested depth levels deep (1: the value itself)
// whose innermost level is of kind t.
func diffDeepValue(depth int, t attribute.Type) attribute.Value {
	var v attribute.Value
	switch t {
	case attribute.MAP:
		v = attribute.MapValue(attribute.String("leaf", "x"))
	case attribute.SLICE:
		v = attribute.SliceValue(attribute.StringValue("leaf"))
	case attribute.BYTESLICE:
		v = attribute.ByteSliceValue([]byte("leaf"))
	case attribute.INT64SLICE:
		v = attribute.Int64SliceValue([]int64{1})
	}
	for i := 1; i < depth; i++ {
		if i%2 == 0 {
			v = attribute.SliceValue(v, attribute.IntValue(i))
		} else {
			v = attribute.MapValue(attribute.KeyValue{Key: "d", Value: v}, attribute.Int("i", i))
		}
	}
	return v
}

// Zap values for the script.

type diffStringer string

func (s diffStringer) String() string { return string(s) }

type diffPtrStringer struct{ s string }

func (p *diffPtrStringer) String() string { return p.s }

type diffPanicStringer struct{}

func (diffPanicStringer) String() string { panic("stringer boom") }

type diffObject struct {
	name  string
	n     int
	tags  []string
	child *diffObject
}

func (o diffObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("name", o.name)
	enc.AddInt("n", o.n)
	enc.AddUint64("big", math.MaxUint64)
	enc.AddFloat32("f32", 0.1)
	enc.AddDuration("d", time.Second)
	enc.AddTime("t", diffEpoch)
	enc.AddBinary("bin", []byte{1, 2})
	enc.AddByteString("bs", []byte("bs"))
	enc.AddComplex128("c", 1i)
	if err := enc.AddArray("tags", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
		for _, t := range o.tags {
			a.AppendString(t)
		}
		return nil
	})); err != nil {
		return err
	}
	if err := enc.AddReflected("refl", map[string]int{"r": o.n}); err != nil {
		return err
	}
	if o.child != nil {
		if err := enc.AddObject("child", o.child); err != nil {
			return err
		}
	}
	enc.OpenNamespace("inner")
	enc.AddString("name", "inner "+o.name)
	enc.AddBool("ok", true)
	return nil
}

type diffArray struct{}

func (diffArray) MarshalLogArray(a zapcore.ArrayEncoder) error {
	a.AppendBool(true)
	a.AppendByteString([]byte("bs"))
	a.AppendComplex128(1 + 1i)
	a.AppendComplex64(2 - 2i)
	a.AppendFloat64(0.5)
	a.AppendFloat32(0.1)
	a.AppendInt(-1)
	a.AppendInt64(math.MinInt64)
	a.AppendInt32(-32)
	a.AppendInt16(-16)
	a.AppendInt8(-8)
	a.AppendString("s")
	a.AppendUint(1)
	a.AppendUint64(math.MaxUint64)
	a.AppendUint32(32)
	a.AppendUint16(16)
	a.AppendUint8(8)
	a.AppendUintptr(0xff)
	a.AppendDuration(time.Millisecond)
	a.AppendTime(diffEpoch)
	if err := a.AppendObject(diffObject{name: "in array"}); err != nil {
		return err
	}
	if err := a.AppendArray(zapcore.ArrayMarshalerFunc(func(in zapcore.ArrayEncoder) error {
		in.AppendString("nested")
		return nil
	})); err != nil {
		return err
	}
	return a.AppendReflected([]any{1, "r"})
}

type diffPanicObject struct{}

func (diffPanicObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("before", "panic")
	panic("object boom")
}

type diffPanicArray struct{}

func (diffPanicArray) MarshalLogArray(a zapcore.ArrayEncoder) error {
	a.AppendString("before")
	panic("array boom")
}

type diffFailObject struct{}

func (diffFailObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("partial", "yes")
	return errors.New("marshal failed")
}

type diffDeepObject int

func diffDeep(n int) diffDeepObject { return diffDeepObject(n) }

func (d diffDeepObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddInt("level", int(d))
	if d > 1 {
		return enc.AddObject("next", d-1)
	}
	return nil
}

type diffStruct struct {
	A int             `json:"a"`
	B string          `json:"b,omitempty"`
	C []float64       `json:"c"`
	D map[string]bool `json:"d"`
	E *int            `json:"e"`
}

type diffPanicJSON struct{}

func (diffPanicJSON) MarshalJSON() ([]byte, error) { panic("json boom") }

type diffCycle struct {
	Next *diffCycle `json:"next"`
}

func diffCyclic() *diffCycle {
	c := &diffCycle{}
	c.Next = c
	return c
}

type diffTypedErr struct{ code int }

func (e *diffTypedErr) Error() string { return fmt.Sprintf("typed error %d", e.code) }

type diffCodedErr struct{}

func (diffCodedErr) Error() string     { return "coded" }
func (diffCodedErr) ErrorType() string { return "diff.Coded" }

// diffFormatterErr formats richer than its message, as pkg/errors does.
type diffFormatterErr struct{ msg string }

func (e diffFormatterErr) Error() string { return e.msg }

func (e diffFormatterErr) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		fmt.Fprintf(s, "%s\nmain.work\n\t/src/main.go:12\nmain.main\n\t/src/main.go:5", e.msg)
		return
	}
	io.WriteString(s, e.msg)
}

type diffPanicErr struct{}

func (diffPanicErr) Error() string { panic("error boom") }

// Comparison.

// diffScopeRecords is what one receiver got for one scope.
type diffScopeRecords struct {
	scope   *commonpb.InstrumentationScope
	schema  string
	records []*logpb.LogRecord
}

// diffReceived is what one receiver got, by scope.
type diffReceived struct {
	resource       *resourcepb.Resource
	resourceSchema string
	scopes         map[string]*diffScopeRecords
	order          []string
	n              int
}

// diffGroup groups records by scope (name, version, schema URL,
// attributes), in the order they arrived, and checks that every request
// carried the same resource.
func diffGroup(rls []*logpb.ResourceLogs) (*diffReceived, error) {
	g := &diffReceived{scopes: map[string]*diffScopeRecords{}}
	for i, rl := range rls {
		if i == 0 {
			g.resource, g.resourceSchema = rl.GetResource(), rl.GetSchemaUrl()
		} else if !proto.Equal(g.resource, rl.GetResource()) || g.resourceSchema != rl.GetSchemaUrl() {
			return nil, fmt.Errorf("request %d has another resource: %s (schema %q)", i, diffJSON(rl.GetResource()), rl.GetSchemaUrl())
		}
		for _, sl := range rl.GetScopeLogs() {
			key := diffScopeKey(sl)
			s, ok := g.scopes[key]
			if !ok {
				s = &diffScopeRecords{scope: sl.GetScope(), schema: sl.GetSchemaUrl()}
				g.scopes[key] = s
				g.order = append(g.order, key)
			}
			s.records = append(s.records, sl.GetLogRecords()...)
			g.n += len(sl.GetLogRecords())
		}
	}
	return g, nil
}

func diffScopeKey(sl *logpb.ScopeLogs) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(sl.GetScope())
	if err != nil {
		panic(err)
	}
	return string(b) + "\x00" + sl.GetSchemaUrl()
}

func diffScopeName(s *diffScopeRecords) string {
	return fmt.Sprintf("scope %s (schema %q)", diffCut(protojson.MarshalOptions{}.Format(s.scope)), s.schema)
}

// diffCompare compares what the SDK's receiver got with what ours got and
// returns how many records it compared and a report of the differences,
// "" when there are none. An observed timestamp that the pipelines set
// themselves (the input left it unset) is the time of sending, different on
// each side: one in [from, to] on both sides is checked to be there, and
// then not compared.
// bridged tells the scopes of records that came through the bridge.
func diffCompare(sdkRL, ourRL []*logpb.ResourceLogs, from, to time.Time, bridged func(*commonpb.InstrumentationScope) bool) (int, string) {
	var report strings.Builder
	sdk, err := diffGroup(sdkRL)
	if err != nil {
		return 0, "SDK side: " + err.Error()
	}
	ours, err := diffGroup(ourRL)
	if err != nil {
		return 0, "zaplens side: " + err.Error()
	}
	if !proto.Equal(sdk.resource, ours.resource) || sdk.resourceSchema != ours.resourceSchema {
		fmt.Fprintf(&report, "resources differ (schema %q, %q):\n%s\n", sdk.resourceSchema, ours.resourceSchema,
			diffLines(diffJSON(sdk.resource), diffJSON(ours.resource)))
	}
	if sdk.n != ours.n {
		fmt.Fprintf(&report, "the SDK's receiver got %d records, ours %d\n", sdk.n, ours.n)
	}
	compared := 0
	for _, key := range sdk.order {
		s := sdk.scopes[key]
		o, ok := ours.scopes[key]
		if !ok {
			fmt.Fprintf(&report, "%s: %d records on the SDK's side, none on ours\n", diffScopeName(s), len(s.records))
			continue
		}
		if len(s.records) != len(o.records) {
			fmt.Fprintf(&report, "%s: %d records on the SDK's side, %d on ours\n", diffScopeName(s), len(s.records), len(o.records))
		}
		shown := 0
		for i := range min(len(s.records), len(o.records)) {
			a, b := diffNormalize(s.records[i], o.records[i], from, to, bridged(s.scope))
			compared++
			if proto.Equal(a, b) {
				continue
			}
			if shown++; shown > 3 {
				fmt.Fprintf(&report, "%s: more records differ\n", diffScopeName(s))
				break
			}
			fmt.Fprintf(&report, "%s, record %d of %d differs (- SDK, + zaplens):\n%s\n",
				diffScopeName(s), i, len(s.records), diffLines(diffJSON(a), diffJSON(b)))
		}
	}
	for _, key := range ours.order {
		if _, ok := sdk.scopes[key]; !ok {
			o := ours.scopes[key]
			fmt.Fprintf(&report, "%s: %d records on our side, none on the SDK's\n", diffScopeName(o), len(o.records))
		}
	}
	return compared, report.String()
}

// diffNormalize returns a and b with an observed timestamp the pipelines
// set themselves cleared, or left as they are, to show, if it is not what
// each would set. The SDK sets it to the time of Emit; so does our Emit,
// while our bridge takes zap's entry time, read a moment before (wire.go's
// setWireRecord): with zap's own clock that is the same instant, with the
// test's clock it is the record's time.
func diffNormalize(a, b *logpb.LogRecord, from, to time.Time, bridged bool) (*logpb.LogRecord, *logpb.LogRecord) {
	in := func(ns uint64) bool {
		return ns >= uint64(from.UnixNano()) && ns <= uint64(to.UnixNano())
	}
	if !in(a.GetObservedTimeUnixNano()) {
		return a, b // set by the input: compared
	}
	if !in(b.GetObservedTimeUnixNano()) && (!bridged || b.GetObservedTimeUnixNano() != b.GetTimeUnixNano()) {
		return a, b
	}
	a, b = proto.Clone(a).(*logpb.LogRecord), proto.Clone(b).(*logpb.LogRecord)
	a.ObservedTimeUnixNano, b.ObservedTimeUnixNano = 0, 0
	return a, b
}

func diffJSON(m proto.Message) string {
	return protojson.MarshalOptions{Multiline: true, Indent: "  "}.Format(m)
}

// diffLines is a line diff of a and b: "-" lines only in a, "+" lines only
// in b, with three lines of context, cut short past 120 lines.
func diffLines(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	// Common prefix and suffix first: records differ in few places, and
	// the quadratic part then runs on what is left.
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	type op struct {
		kind byte
		line string
	}
	var ops []op
	if len(mx)*len(my) > 4_000_000 {
		for _, l := range mx {
			ops = append(ops, op{'-', l})
		}
		for _, l := range my {
			ops = append(ops, op{'+', l})
		}
	} else {
		lcs := make([][]int, len(mx)+1)
		for i := range lcs {
			lcs[i] = make([]int, len(my)+1)
		}
		for i := len(mx) - 1; i >= 0; i-- {
			for j := len(my) - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(mx) || j < len(my) {
			switch {
			case i < len(mx) && j < len(my) && mx[i] == my[j]:
				ops = append(ops, op{' ', mx[i]})
				i, j = i+1, j+1
			case j < len(my) && (i == len(mx) || lcs[i][j+1] >= lcs[i+1][j]):
				ops = append(ops, op{'+', my[j]})
				j++
			default:
				ops = append(ops, op{'-', mx[i]})
				i++
			}
		}
	}
	var out strings.Builder
	for _, l := range x[max(0, pre-3):pre] {
		out.WriteString("  " + diffCut(l) + "\n")
	}
	lines := 0
	for _, o := range ops {
		if lines++; lines > 120 {
			out.WriteString("  ...\n")
			return out.String()
		}
		out.WriteString(string(o.kind) + " " + diffCut(o.line) + "\n")
	}
	for _, l := range x[len(x)-suf : min(len(x), len(x)-suf+3)] {
		out.WriteString("  " + diffCut(l) + "\n")
	}
	return out.String()
}

// diffCut keeps a line of a long value readable.
func diffCut(l string) string {
	if len(l) > 200 {
		return fmt.Sprintf("%s... (%d bytes)", l[:200], len(l))
	}
	return l
}
