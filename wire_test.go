package zaplens

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.uber.org/multierr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/zapfield"
	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// wireHead is the entry's record but its fields, and its baggage in e, as
// Core.write makes them, with the same functions.
func wireHead(c *Core, e *zapfield.Encoder, ent *zapcore.Entry, fields []zapcore.Field) otlpwire.Record {
	r := readEntry(fields)
	_, sc := c.entryContext(&r)
	c.addCtxAttrs(e, &r)
	var rec otlpwire.Record
	setWireRecord(&rec, ent, severity(ent.Level), sc, c.eventName(&r))
	return rec
}

// generalBytes is the record the general way writes for the entry: the
// conversion to attributes, made unique, then AppendRecord.
func generalBytes(c *Core, ent zapcore.Entry, fields []zapcore.Field, lim otlpwire.Limits) []byte {
	e := zapfield.GetEncoder()
	defer zapfield.PutEncoder(e)
	rec := wireHead(c, e, &ent, fields)
	return otlpwire.AppendRecord(nil, &rec, e.Attributes(&c.with, &ent, fields), lim)
}

// directBytes is the record the direct way writes, if it takes the entry.
// (That it leaves its encoder clean is held in internal/zapfield's tests.)
func directBytes(c *Core, ent zapcore.Entry, fields []zapcore.Field, lim otlpwire.Limits) ([]byte, bool) {
	e := zapfield.GetEncoder()
	defer zapfield.PutEncoder(e)
	rec := wireHead(c, e, &ent, fields)
	return e.AppendDirect(nil, &c.with, &rec, &ent, fields, lim)
}

// afterDirectBytes is the record the general way writes once the direct
// way has given the entry up, reusing what the direct way converted, as
// Core.write does; nil if the direct way took it.
func afterDirectBytes(c *Core, ent zapcore.Entry, fields []zapcore.Field, lim otlpwire.Limits) []byte {
	e := zapfield.GetEncoder()
	defer zapfield.PutEncoder(e)
	rec := wireHead(c, e, &ent, fields)
	if _, ok := e.AppendDirect(nil, &c.with, &rec, &ent, fields, lim); ok {
		return nil
	}
	return otlpwire.AppendRecord(nil, &rec, e.Attributes(&c.with, &ent, fields), lim)
}

// wireCore is a bridge core on a zaplens provider whose export discards.
func wireCore(t *testing.T, opts ...otlplog.Option) (*Core, otlpwire.Limits) {
	t.Helper()
	p := newTestProvider(t, append(opts, withDiscardExport())...)
	return NewCore(WithLoggerProvider(p)), p.DirectLimits()
}

// bigUint64 is a uintptr's value beyond 32 bits; a variable, so that the
// test compiles on 32 bits, where uintptr(bigUint64) is cut as a program's
// would be.
var bigUint64 uint64 = 1<<63 + 5

// The direct way writes exactly the general way's bytes for every entry it
// takes, and takes the entries programs log most: every scalar field kind,
// With fields, a context, the caller and a stack.
func TestDirectMatchesGeneral(t *testing.T) {
	cleanEnv(t)
	core, lim := wireCore(t)
	ctx, _ := spanContext(t)
	ent := zapcore.Entry{Level: zapcore.WarnLevel, Time: diffEpoch, Message: "step done",
		Caller: zapcore.NewEntryCaller(0, "/src/train.go", 42, true), Stack: "goroutine 1 [running]:\nmain.main()"}
	ent.Caller.Function = "main.main"
	taken := []struct {
		name   string
		core   *Core
		fields []zapcore.Field
	}{
		{"case one", core, caseOneFields(ctx)},
		{"no fields", core, nil},
		{"scalars", core, []zapcore.Field{zap.Int8("i8", -8), zap.Int16("i16", 16), zap.Int32("i32", -32),
			zap.Uint("u", 7), zap.Uint8("u8", 255), zap.Uint16("u16", 65535), zap.Uint32("u32", 1<<32-1),
			zap.Uint64("u64", 1<<63-1), zap.Uintptr("p", 0xbeef), zap.Duration("d", -time.Second),
			zap.Bool("t", true), zap.Bool("f", false), zap.Float32("f32", 0.1), zap.String("empty", ""),
			zap.String("long", strings.Repeat("é", 200)), zap.String("bad\xff", "val\xfe"), zap.String("", "no key"),
			zap.Skip(), zap.Any("ctx", ctx)}},
		{"kinds beyond the scalars, either way", core, []zapcore.Field{zap.Float32("f32", 0.1),
			zap.Time("when", diffEpoch), zap.Binary("binary", []byte{0, 0xff}), zap.Binary("binary.empty", nil),
			zap.ByteString("bytestring", []byte("raw\xff")), zap.Uint64("u64.big", 1<<63),
			zap.Complex128("complex", 1+2i), zap.Complex64("complex64", 1), zap.Any("ctx.any", ctx),
			zap.Reflect("ctx.reflect", ctx), zap.Duration("d", time.Minute)}},
		{"narrow integers made by hand", core, []zapcore.Field{
			{Key: "u32", Type: zapcore.Uint32Type, Integer: 1 << 40}, {Key: "u16", Type: zapcore.Uint16Type, Integer: 70000},
			{Key: "u8", Type: zapcore.Uint8Type, Integer: 300}, {Key: "i32", Type: zapcore.Int32Type, Integer: 1<<40 + 5},
			{Key: "i16", Type: zapcore.Int16Type, Integer: -70000}, {Key: "i8", Type: zapcore.Int8Type, Integer: 200}}},
		{"with", core.With([]zapcore.Field{zap.String("job", "megatron"), zap.Int("rank", 3), Context(ctx)}).(*Core),
			[]zapcore.Field{zap.Int("step", 1)}},
		{"with twice", core.With([]zapcore.Field{zap.String("a", "1")}).With([]zapcore.Field{zap.Object("o", diffObject{name: "x"})}).(*Core),
			[]zapcore.Field{zap.Int("b", 2)}},
		{"zap.Error, the stack its exception's", core, []zapcore.Field{zap.Error(fmt.Errorf("outer: %w", &diffTypedErr{code: 1}))}},
		{"two zap.Errors, the last wins", core, []zapcore.Field{zap.Error(errors.New("first")), zap.Int("n", 1), zap.Error(errors.New("second"))}},
		{"an error under another key", core, []zapcore.Field{zap.NamedError("cause", diffFormatterErr{msg: "cause"})}},
		{"a multi-error", core, []zapcore.Field{zap.Error(multierr.Combine(errors.New("a"), diffFormatterErr{msg: "b"}))}},
		{"user code", core, []zapcore.Field{zap.Stringer("s", diffStringer("x")), zap.Object("o", diffObject{name: "x", tags: []string{"t"}}),
			zap.Array("a", diffArray{}), zap.Ints("ints", []int{1}), zap.Reflect("r", map[string]int{"a": 1}),
			zap.Any("any.struct", diffStruct{B: "any"})}},
		{"user code that panics or fails", core, []zapcore.Field{zap.Stringer("p", diffPanicStringer{}),
			zap.Stringer("nil", (*diffPtrStringer)(nil)), zap.Object("po", diffPanicObject{}), zap.Array("pa", diffPanicArray{}),
			zap.Object("fo", diffFailObject{}), zap.Error(diffPanicErr{}),
			zap.Object("eo", zapcore.ObjectMarshalerFunc(func(enc zapcore.ObjectEncoder) error {
				enc.AddString("partial", "yes")
				return diffPanicErr{}
			})),
			zap.Array("ea", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
				a.AppendString("partial")
				return diffPanicErr{}
			}))}},
		{"objects and arrays held as entries", core, []zapcore.Field{zap.Object("dup", diffMessyObject{}),
			zap.Object("empty", zapcore.ObjectMarshalerFunc(func(zapcore.ObjectEncoder) error { return nil })),
			zap.Ints("none", nil), zap.Objects("objs", []diffObject{{name: "a"}, {name: "b"}}), zap.Object("deep", diffDeep(70)),
			zap.Array("nested", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
				return a.AppendArray(zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error { a.AppendInt(1); return nil }))
			})), zap.Object("\xffbad", diffMessyObject{})}},
		{"an ErrorType that panics, after an exception", core, []zapcore.Field{zap.Error(errors.New("first")), zap.Error(&fieldtest.PanicTypeErr{Msg: "second"})}},
		{"a nil error whose ErrorType panics", core, []zapcore.Field{zap.Error((*fieldtest.PanicTypeErr)(nil))}},
		{"kinds written straight", core, []zapcore.Field{zap.Time("utc", diffEpoch.UTC()),
			zap.Time("zone", diffEpoch.In(time.FixedZone("X", 5*3600+1800))), zap.Time("far", time.Date(3000, 1, 1, 0, 0, 0, 1, time.UTC)),
			zap.Time("zero", time.Time{}), {Key: "local", Type: zapcore.TimeType, Integer: diffEpoch.UnixNano()},
			{Key: "badloc", Type: zapcore.TimeType, Integer: 1, Interface: "not a location"},
			{Key: "nilloc", Type: zapcore.TimeType, Integer: 1, Interface: (*time.Location)(nil)},
			{Key: "badfull", Type: zapcore.TimeFullType, Interface: 3},
			{Key: "badbin", Type: zapcore.BinaryType, Interface: "not bytes"},
			{Key: "badbs", Type: zapcore.ByteStringType, Interface: 7},
			{Key: "nilstringer", Type: zapcore.StringerType},
			{Key: "notstringer", Type: zapcore.StringerType, Interface: 7},
			{Key: "uintptr.neg", Type: zapcore.UintptrType, Integer: -1}, {Key: "uint64.neg", Type: zapcore.Uint64Type, Integer: -2},
			zap.ByteString("bs.nil", nil), zap.ByteString("bs\xff", []byte("é")), zap.Uintptr("p.big", uintptr(bigUint64)),
			zap.Stringer("s.bad", diffStringer("x\xffy")), zap.Stringer("s.ptr", &diffPtrStringer{s: "ok"}),
			zap.NamedError("cause", errors.New("plain")), zap.NamedError("bad", errors.New("m\xff")),
			zap.NamedError("nilcause", nil), zap.NamedError("panics", diffPanicErr{}),
			zap.NamedError("nilptr", (*nilDerefErr)(nil)), zap.Int("after", 1)}},
		{"zap.Error of invalid UTF-8", core, []zapcore.Field{zap.Error(errors.New("m\xff"))}},
		{"zap.Error of a nil pointer", core, []zapcore.Field{zap.Error((*nilDerefErr)(nil))}},
		{"zap.Error whose Error panics", core, []zapcore.Field{zap.Error(diffPanicErr{}), zap.Int("n", 1)}},
		{"a nil zap.Error", core, []zapcore.Field{zap.Error(nil), zap.Int("n", 1)}},
		{"values json prints badly", core, fieldtest.KeptValueFields()},
		{"an event name", core, []zapcore.Field{EventName("train.step"), zap.Int("step", 1), zap.String(eventNameKey, "an attribute")}},
		{"an event name from With, the entry's winning", core.With([]zapcore.Field{EventName("from.with"), zap.Int("a", 1)}).(*Core),
			[]zapcore.Field{zap.Int("b", 2), EventName("bad\xffname"), EventName("last")}},
		{"an event name from With alone", core.With([]zapcore.Field{EventName("from.with")}).(*Core), []zapcore.Field{zap.Int("b", 2)}},
	}
	bagCore := NewCore(WithLoggerProvider(core.b.provider), WithBaggage())
	bagCtx := withTestBaggage(t, ctx, "tenant", "acme", "user", "u\u00e9", "a", "from baggage")
	taken = append(taken, []struct {
		name   string
		core   *Core
		fields []zapcore.Field
	}{
		{"baggage, all members", bagCore, []zapcore.Field{Context(bagCtx), zap.Int("step", 1)}},
		{"baggage, named members", NewCore(WithLoggerProvider(core.b.provider), WithBaggage("user", "missing", "tenant")),
			[]zapcore.Field{Context(bagCtx), zap.Int("step", 1)}},
		{"baggage from With", bagCore.With([]zapcore.Field{Context(bagCtx)}).(*Core), []zapcore.Field{zap.Int("step", 1)}},
		{"baggage, no context", bagCore, []zapcore.Field{zap.Int("step", 1)}},
	}...)
	for _, tc := range taken {
		got, ok := directBytes(tc.core, ent, tc.fields, lim)
		if !ok {
			t.Errorf("%s: the direct way did not take it", tc.name)
			continue
		}
		if want := generalBytes(tc.core, ent, tc.fields, lim); !bytes.Equal(got, want) {
			t.Errorf("%s:\n direct  %x\n general %x", tc.name, got, want)
		}
	}

	// What the direct way leaves to the general one.
	left := []struct {
		name   string
		core   *Core
		fields []zapcore.Field
	}{
		{"repeated key", core, []zapcore.Field{zap.Int("a", 1), zap.String("a", "2")}},
		{"repeated after UTF-8 repair", core, []zapcore.Field{zap.Int("a\xff", 1), zap.Int("a\xfe", 2)}},
		{"a field named like the caller", core, []zapcore.Field{zap.String(zapfield.KeyFilePath, "mine")}},
		{"an inline object", core, []zapcore.Field{zap.Inline(diffObject{name: "y"})}},
		{"a field named like the exception", core, []zapcore.Field{zap.Error(errors.New("boom")), zap.String(zapfield.KeyExceptionMessage, "mine")}},
		{"an error's causes under a key in use", core, []zapcore.Field{zap.Int("errorCauses", 1), zap.Error(multierr.Combine(errors.New("a"), errors.New("b")))}},
		{"namespace", core, []zapcore.Field{zap.Namespace("ns"), zap.Int("a", 1)}},
		{"two zap.Errors, then a repeated key", core, []zapcore.Field{zap.Error(errors.New("first")), zap.Int("n", 1),
			zap.Error(errors.New("second")), zap.Int("n", 2)}},
		{"an ErrorType that panics after an exception, then a namespace", core, []zapcore.Field{zap.Error(errors.New("first")),
			zap.Error(&fieldtest.PanicTypeErr{Msg: "second"}), zap.Namespace("ns"), zap.Int("a", 1)}},
		{"a zap.Error after the direct way gave up, the last", core, []zapcore.Field{zap.Error(errors.New("first")),
			zap.Int("a", 1), zap.Int("a", 2), zap.Error(errors.New("second"))}},
		{"too many keys", core, manyFields(zapfield.MaxDirectKeys + 1)},
		{"With a zap.Error", core.With([]zapcore.Field{zap.Error(errors.New("x"))}).(*Core), nil},
		{"With a namespace", core.With([]zapcore.Field{zap.Namespace("ns")}).(*Core), nil},
		{"With repeats a key", core.With([]zapcore.Field{zap.Int("a", 1)}).(*Core), []zapcore.Field{zap.Int("a", 2)}},
		{"a baggage member named like a field", bagCore, []zapcore.Field{Context(bagCtx), zap.Int("a", 1)}},
		{"a baggage member named like a With field", bagCore.With([]zapcore.Field{zap.Int("tenant", 1)}).(*Core),
			[]zapcore.Field{Context(bagCtx)}},
	}
	for _, tc := range left {
		if _, ok := directBytes(tc.core, ent, tc.fields, lim); ok {
			t.Errorf("%s: the direct way took it", tc.name)
			continue
		}
		if got, want := afterDirectBytes(tc.core, ent, tc.fields, lim), generalBytes(tc.core, ent, tc.fields, lim); !bytes.Equal(got, want) {
			t.Errorf("%s, the general way after the direct one:\n got  %x\n want %x", tc.name, got, want)
		}
	}
}

func manyFields(n int) []zapcore.Field {
	fields := make([]zapcore.Field, n)
	for i := range fields {
		fields[i] = zap.Int(strings.Repeat("k", i+1), i)
	}
	return fields
}

// Random entries from a pool of fields whose keys repeat: wherever the
// direct way takes one, its bytes are the general way's; under the SDK's
// default limits and under tight ones.
func TestDirectMatchesGeneralRandom(t *testing.T) {
	cleanEnv(t)
	type side struct {
		core *Core
		lim  otlpwire.Limits
	}
	var sides [2]side
	sides[0].core, sides[0].lim = wireCore(t)
	sides[1].core, sides[1].lim = wireCore(t, otlplog.WithAttributeCountLimit(4), otlplog.WithAttributeValueLengthLimit(3))
	ctx, _ := spanContext(t)
	pool := append(diffEveryField(), caseOneFields(ctx)...)
	rng := rand.New(rand.NewPCG(1, 2))
	taken := 0
	for i := range 6000 {
		core, lim := sides[i%2].core, sides[i%2].lim
		pick := func(n int) []zapcore.Field {
			out := make([]zapcore.Field, n)
			for j := range out {
				out[j] = pool[rng.IntN(len(pool))]
			}
			return out
		}
		c := core
		if rng.IntN(3) == 0 {
			c = c.With(pick(rng.IntN(4))).(*Core)
		}
		ent := zapcore.Entry{Level: zapcore.Level(rng.IntN(7) - 1), Time: diffEpoch.Add(time.Duration(i)), Message: "m"}
		if rng.IntN(2) == 0 {
			ent.Caller = zapcore.NewEntryCaller(0, "/x.go", i, true)
		}
		fields := pick(rng.IntN(6))
		want := generalBytes(c, ent, fields, lim)
		got, ok := directBytes(c, ent, fields, lim)
		if !ok {
			if got := afterDirectBytes(c, ent, fields, lim); !bytes.Equal(got, want) {
				t.Fatalf("entry %d, limits %+v, fields %v, the general way after the direct one:\n got  %x\n want %x", i, lim, fields, got, want)
			}
			continue
		}
		taken++
		if !bytes.Equal(got, want) {
			t.Fatalf("entry %d, limits %+v, fields %v:\n direct  %x\n general %x", i, lim, fields, got, want)
		}
	}
	if taken < 1000 {
		t.Fatalf("the direct way took only %d of 6000 entries", taken)
	}
	t.Logf("the direct way took %d of 6000 entries", taken)
}

// A record the direct way would write too large for a request goes the
// general way, and is cut there.
func TestDirectLeavesHugeRecordToCut(t *testing.T) {
	cleanEnv(t)
	p := newTestProvider(t, withDiscardExport(), otlplog.WithRequestBytes(64<<10))
	l := zap.New(NewCore(WithLoggerProvider(p)))
	l.Info("big", zap.String("s", strings.Repeat("x", 100<<10)))
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Cut != 1 || s.Exported != 1 {
		t.Fatalf("stats %+v, want one record, cut and exported", s)
	}
}

// countingObject counts how often zap asks it to marshal itself.
type countingObject struct{ n *int }

func (c countingObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	*c.n++
	enc.AddString("seen", "yes")
	return nil
}

// nilDerefErr's Error panics on a nil pointer.
type nilDerefErr struct{ msg string }

func (e *nilDerefErr) Error() string { return e.msg }

// countingError counts its calls, as countingStringer does.
type countingError struct{ n *int }

func (c countingError) Error() string { *c.n++; return "boom" }

// User code runs once per entry, whichever way the entry goes and wherever
// the direct way gives up, even after it has run that code itself: the
// general way then takes what the direct way converted.
func TestDirectRunsUserCodeOnce(t *testing.T) {
	cleanEnv(t)
	p := newTestProvider(t, withDiscardExport(), otlplog.WithRequestBytes(64<<10))
	l := zap.New(NewCore(WithLoggerProvider(p)))
	for _, after := range []struct {
		name   string
		fields []zapcore.Field
	}{
		{"nothing", nil},
		{"another zap.Error", []zapcore.Field{zap.Error(errors.New("boom"))}},
		{"a repeated key", []zapcore.Field{zap.Int("a", 1), zap.Int("a", 2)}},
		{"a namespace", []zapcore.Field{zap.Namespace("ns"), zap.Int("b", 1)}},
		{"an inline object", []zapcore.Field{zap.Inline(diffObject{name: "i"})}},
		{"the exception's key", []zapcore.Field{zap.String(zapfield.KeyExceptionType, "mine")}},
		{"too many keys", manyFields(zapfield.MaxDirectKeys + 1)},
		{"a record too large, cut", []zapcore.Field{zap.String("big", strings.Repeat("x", 100<<10))}},
	} {
		var obj, str, errs int
		fields := []zapcore.Field{zap.Object("req", countingObject{&obj}), zap.Stringer("s", countingStringer{&str}),
			zap.Error(countingError{&errs})}
		l.Info("x", append(fields, after.fields...)...)
		if obj != 1 || str != 1 || errs != 1 {
			t.Errorf("then %s: the marshaler ran %d times, the Stringer %d, the error %d; want once each", after.name, obj, str, errs)
		}
	}
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Exported != 8 || s.Cut != 1 {
		t.Errorf("stats %+v, want 8 records exported, one of them cut", s)
	}
}

// A per-request logger.With(Context(ctx)) converts and encodes nothing
// again: what it costs is zap's logger, the tee's and the bridge's copies
// and the ids, however many With fields came before.
func TestWithContextOnlyCopiesNothing(t *testing.T) {
	cleanEnv(t)
	p := newTestProvider(t, withDiscardExport())
	ctx, _ := spanContext(t)
	logger := zap.New(NewTee(jsonDiscard(), WithLoggerProvider(p))).With(
		zap.String("job", "megatron"), zap.Int("rank", 3), zap.Int("world", 64), zap.String("host", "h"), zap.Bool("ok", true))
	n := testing.AllocsPerRun(100, func() { _ = logger.With(Context(ctx)) })
	if n > 6 { // zap's logger and fields, the tee, the core, the ids: measured 6
		t.Errorf("With(Context(ctx)): %v allocations, want at most 6", n)
	}
	t.Logf("With(Context(ctx)): %v allocations", n)
}

// FuzzDirectMatchesGeneral: fields made from the fuzzer's bytes (keys and
// strings of any bytes, integers of every width, floats, bools, binaries,
// times, contexts, Stringers, errors, objects, namespaces), with and
// without With fields, a caller and a stack: wherever the direct way takes
// the entry, its bytes are the general way's, and where it gives the entry
// up, the general way reusing its conversions writes them too. Plain `go
// test` runs the seeds only.
func FuzzDirectMatchesGeneral(f *testing.F) {
	f.Add([]byte("\x00\x01k\x05hello\x01\x02n\x03"), uint8(0))
	f.Add([]byte("\x03\x01a\x00\x03\x01a\x01\x09\x02\xff\xfe"), uint8(3))
	f.Add([]byte{}, uint8(255))
	cleanEnv(f)
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport())
	if err != nil {
		f.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	tight, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport(),
		otlplog.WithAttributeCountLimit(3), otlplog.WithAttributeValueLengthLimit(2))
	if err != nil {
		f.Fatal(err)
	}
	defer tight.Shutdown(context.Background())
	ctx, _ := spanContext(f)
	// Baggage whose keys the fuzzer's may meet: the direct way must give
	// a repeat up.
	ctx = withTestBaggage(f, ctx, "a", "1", "b", "two", "k", "")
	f.Fuzz(func(t *testing.T, data []byte, shape uint8) {
		prov := p
		if shape&1 != 0 {
			prov = tight
		}
		core := NewCore(WithLoggerProvider(prov), WithBaggage())
		fields := fuzzFields(data, ctx)
		if shape&2 != 0 && len(fields) > 0 {
			core = core.With(fields[:len(fields)/2]).(*Core)
			fields = fields[len(fields)/2:]
		}
		ent := zapcore.Entry{Level: zapcore.Level(int8(shape>>2)%8 - 1), Time: diffEpoch, Message: string(data)}
		if shape&0x40 != 0 {
			ent.Caller = zapcore.NewEntryCaller(0, string(data), len(data), true)
			ent.Caller.Function = "f"
		}
		if shape&0x80 != 0 {
			ent.Stack = "stack\xff"
		}
		lim := prov.DirectLimits()
		want := generalBytes(core, ent, fields, lim)
		got, ok := directBytes(core, ent, fields, lim)
		if !ok {
			got = afterDirectBytes(core, ent, fields, lim)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("fields %v (direct way took it: %v):\n got  %x\n want %x", fields, ok, got, want)
		}
	})
}

// fuzzFields reads fields from data: a kind byte, a key, then the value.
func fuzzFields(data []byte, ctx context.Context) []zapcore.Field {
	var fields []zapcore.Field
	next := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n]
		data = data[n:]
		return b
	}
	str := func() string {
		if len(data) == 0 {
			return ""
		}
		return string(next(int(next(1)[0] % 12)))
	}
	num := func() int64 {
		var v int64
		for _, c := range next(8) {
			v = v<<8 | int64(c)
		}
		return v
	}
	for len(data) > 0 && len(fields) < 40 {
		kind := next(1)[0] % 20
		key := str()
		switch kind {
		case 0:
			fields = append(fields, zap.String(key, str()))
		case 1:
			fields = append(fields, zap.Int64(key, num()))
		case 2:
			fields = append(fields, zapcore.Field{Key: key, Type: zapcore.Int32Type, Integer: num()})
		case 3:
			fields = append(fields, zapcore.Field{Key: key, Type: zapcore.Uint8Type, Integer: num()})
		case 4:
			fields = append(fields, zap.Uint64(key, uint64(num())))
		case 5:
			fields = append(fields, zap.Float64(key, float64(num())/7))
		case 6:
			fields = append(fields, zap.Float32(key, float32(num())/3))
		case 7:
			fields = append(fields, zap.Bool(key, num()&1 == 1))
		case 8:
			fields = append(fields, zap.Binary(key, []byte(str())))
		case 9:
			fields = append(fields, zap.Duration(key, time.Duration(num())))
		case 10:
			fields = append(fields, zap.Time(key, time.Unix(0, num()%(1<<62))))
		case 11:
			fields = append(fields, Context(ctx), zap.Skip())
		case 12:
			fields = append(fields, zap.ByteString(key, []byte(str())))
		case 13:
			fields = append(fields, zap.Stringer(key, diffStringer(str())))
		case 14:
			fields = append(fields, zap.NamedError(key, errors.New(str())))
		case 15:
			fields = append(fields, zap.Error(fmt.Errorf("%s: %w", str(), &diffTypedErr{code: int(num())})))
		case 16:
			fields = append(fields, zap.Object(key, diffObject{name: str(), n: int(num()), tags: []string{str()}}))
		case 17:
			fields = append(fields, zap.Namespace(key))
		case 18:
			fields = append(fields, zap.Error(&fieldtest.PanicTypeErr{Msg: str()}))
		case 19:
			fields = append(fields, EventName(str()))
		}
	}
	return fields
}

// diffMessyObject repeats a key, writes its keys out of order and opens a
// namespace of its own: held, its entries must still be what the map
// value would hold.
type diffMessyObject struct{}

func (diffMessyObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("z", "1")
	enc.AddString("a", "2")
	enc.AddString("z", "3")
	enc.AddString("bad\xff", "v\xff")
	enc.OpenNamespace("inner")
	enc.AddInt("k", 1)
	enc.AddInt("k", 2)
	return nil
}
