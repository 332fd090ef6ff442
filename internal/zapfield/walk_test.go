package zapfield

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapLeaves writes each value to a zapcore.ObjectEncoder with the method
// zap's Field.AddTo would call for it, and records which leaf took the
// field. Walk with zapLeaves must leave the encoder as AddTo leaves it:
// zap is the reference for what a field holds.
type zapLeaves struct {
	enc  zapcore.ObjectEncoder
	leaf *string
}

func (l zapLeaves) took(leaf string) bool { *l.leaf = leaf; return true }

func (l zapLeaves) String(k, v string) bool      { l.enc.AddString(k, v); return l.took("String") }
func (l zapLeaves) Int(k string, v int64) bool   { l.enc.AddInt64(k, v); return l.took("Int") }
func (l zapLeaves) Uint(k string, v uint64) bool { l.enc.AddUint64(k, v); return l.took("Uint") }
func (l zapLeaves) Float(k string, v float64) bool {
	l.enc.AddFloat64(k, v)
	return l.took("Float")
}
func (l zapLeaves) Bool(k string, v bool) bool     { l.enc.AddBool(k, v); return l.took("Bool") }
func (l zapLeaves) Binary(k string, v []byte) bool { l.enc.AddBinary(k, v); return l.took("Binary") }
func (l zapLeaves) ByteString(k string, v []byte) bool {
	l.enc.AddByteString(k, v)
	return l.took("ByteString")
}
func (l zapLeaves) Time(k string, v time.Time) bool { l.enc.AddTime(k, v); return l.took("Time") }
func (l zapLeaves) Stringer(_ int, k, v string) bool {
	l.enc.AddString(k, v)
	return l.took("Stringer")
}
func (l zapLeaves) Value(_ int, f *zapcore.Field, v attribute.Value) bool {
	l.enc.AddString(f.Key, v.String())
	return l.took("Value")
}

// Error writes what zap's encoder writes of an error, from ReadError's
// reading: the message under the key (an exception's under "error"),
// "<key>Verbose" when there is one. (Causes are compared by the root's
// tests, where they become attributes.)
func (l zapLeaves) Error(_ int, k string, err error) bool {
	r := ReadError(k, err)
	key := r.Key
	if r.Exception {
		key = errorKey
	}
	l.enc.AddString(key, r.Msg)
	if r.verbose != "" {
		l.enc.AddString(r.field+"Verbose", r.verbose)
	}
	return l.took("Error")
}

func (l zapLeaves) Marshaled(_ int, f *zapcore.Field) bool {
	addGuarded(l.enc, f)
	return l.took("Marshaled")
}
func (l zapLeaves) Nested(_ int, f *zapcore.Field) bool {
	addGuarded(l.enc, f)
	return l.took("Nested")
}

// addGuarded is AddTo with its panic caught, as the root's encoder
// catches it.
func addGuarded(enc zapcore.ObjectEncoder, f *zapcore.Field) {
	defer func() {
		if r := recover(); r != nil {
			enc.AddString(f.Key+"Error", fmt.Sprint("PANIC=", r))
		}
	}()
	f.AddTo(enc)
}

// walked is the JSON of what Walk with zapLeaves makes of f, and the
// leaf that took it.
func walked(f zapcore.Field) (string, string) {
	enc := newJSON()
	leaf := "none"
	Walk(zapLeaves{enc: enc, leaf: &leaf}, []zapcore.Field{f})
	return jsonOf(enc), leaf
}

// byZap is the JSON of what zap's own Field.AddTo makes of f.
func byZap(f zapcore.Field) string {
	enc := newJSON()
	addGuarded(enc, &f)
	return jsonOf(enc)
}

// newJSON is zap's JSON encoder with nothing but the fields, durations in
// nanoseconds and times in RFC 3339, as the bridge writes them.
func newJSON() zapcore.Encoder {
	return zapcore.NewJSONEncoder(zapcore.EncoderConfig{
		EncodeDuration: zapcore.NanosDurationEncoder,
		EncodeTime:     zapcore.RFC3339NanoTimeEncoder,
	})
}

func jsonOf(enc zapcore.Encoder) string {
	b, err := enc.EncodeEntry(zapcore.Entry{}, nil)
	if err != nil {
		panic(err)
	}
	return b.String()
}

type stringer string

func (s stringer) String() string { return string(s) }

type panicStringer struct{}

func (*panicStringer) String() string { panic("no") }

type point struct{ x, y int }

func (p point) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddInt("x", p.x)
	enc.AddInt("y", p.y)
	return nil
}

type verboseErr struct{}

func (verboseErr) Error() string { return "short" }
func (verboseErr) Format(s fmt.State, _ rune) {
	_, _ = fmt.Fprint(s, "long form")
}

var tokyo = time.FixedZone("JST", 9*3600)

// everyField holds a field of every type zap has, the ones made by hand
// with values zap's constructors never put there among them, each with
// the leaf that is to take it.
var everyField = []struct {
	f    zapcore.Field
	leaf string
}{
	{zap.String("s", "v"), "String"},
	{zap.Int64("i64", math.MinInt64), "Int"},
	{zap.Int32("i32", -32), "Int"},
	{zap.Int16("i16", -16), "Int"},
	{zap.Int8("i8", -8), "Int"},
	{zapcore.Field{Key: "i8wide", Type: zapcore.Int8Type, Integer: 300}, "Int"},
	{zapcore.Field{Key: "u8wide", Type: zapcore.Uint8Type, Integer: 300}, "Int"},
	{zapcore.Field{Key: "u16wide", Type: zapcore.Uint16Type, Integer: 1 << 17}, "Int"},
	{zapcore.Field{Key: "u32wide", Type: zapcore.Uint32Type, Integer: 1 << 33}, "Int"},
	{zapcore.Field{Key: "i16wide", Type: zapcore.Int16Type, Integer: 1 << 17}, "Int"},
	{zapcore.Field{Key: "i32wide", Type: zapcore.Int32Type, Integer: 1 << 33}, "Int"},
	{zap.Uint64("u64", 7), "Int"},
	{zap.Uint64("u64max", math.MaxUint64), "Uint"},
	{zap.Uint32("u32", math.MaxUint32), "Int"},
	{zap.Uint16("u16", 16), "Int"},
	{zap.Uint8("u8", 8), "Int"},
	{zap.Uintptr("uptr", 0xff), "Int"},
	{zap.Duration("d", time.Second), "Int"},
	{zap.Float64("f64", 0.1), "Float"},
	{zap.Float64("nan", math.NaN()), "Float"},
	{zap.Bool("t", true), "Bool"},
	{zap.Bool("f", false), "Bool"},
	{zap.Binary("bin", []byte{0, 1}), "Binary"},
	{zapcore.Field{Key: "binhand", Type: zapcore.BinaryType, Interface: "not bytes"}, "Marshaled"},
	{zap.ByteString("bs", []byte("text")), "ByteString"},
	{zapcore.Field{Key: "bshand", Type: zapcore.ByteStringType, Interface: 3}, "Marshaled"},
	{zap.Time("t0", time.Unix(5, 6)), "Time"},
	{zap.Time("tloc", time.Unix(5, 6).In(tokyo)), "Time"},
	{zap.Time("tfull", time.Date(3000, 1, 1, 0, 0, 0, 0, tokyo)), "Time"},
	{zapcore.Field{Key: "tnil", Type: zapcore.TimeType, Integer: 5, Interface: (*time.Location)(nil)}, "Marshaled"},
	{zapcore.Field{Key: "thand", Type: zapcore.TimeType, Integer: 5, Interface: "UTC"}, "Marshaled"},
	{zapcore.Field{Key: "tfullhand", Type: zapcore.TimeFullType, Interface: 5}, "Marshaled"},
	{zap.Stringer("str", stringer("hi")), "Stringer"},
	{zap.Stringer("strnil", (*panicStringer)(nil)), "Stringer"},
	{zap.Stringer("strpanic", &panicStringer{}), "Stringer"},
	{zap.Any("attr", attribute.IntValue(3)), "Value"},
	{zap.NamedError("err", errors.New("boom")), "Error"},
	{zap.NamedError("verr", verboseErr{}), "Error"},
	{zap.Error(errors.New("exc")), "Error"},
	{zap.Error(nil), "none"},
	{zapcore.Field{Key: "errnil", Type: zapcore.ErrorType}, "none"},
	{zapcore.Field{Key: "errstr", Type: zapcore.ErrorType, Interface: "not an error"}, "Marshaled"},
	{zap.Reflect("refl", map[string]int{"a": 1}), "Marshaled"},
	{zap.Object("obj", point{1, 2}), "Marshaled"},
	{zap.Ints("arr", []int{1, 2}), "Marshaled"},
	{zap.Float32("f32", 0.1), "Marshaled"},
	{zap.Complex64("c64", 1+2i), "Marshaled"},
	{zap.Complex128("c128", 1+2i), "Marshaled"},
	{zap.Namespace("ns"), "Nested"},
	{zap.Inline(point{3, 4}), "Nested"},
	{zapcore.Field{Key: "unknown", Type: zapcore.UnknownType}, "Nested"},
	{zapcore.Field{Key: "beyond", Type: 250}, "Nested"},
	{zap.Skip(), "none"},
}

// unlikeZap tells the one field the bridge reads unlike zap: an error
// field with no error, made by hand, on which zap's AddTo panics. The
// bridge adds nothing, as for zap.Error(nil).
func unlikeZap(f *zapcore.Field) bool {
	return f.Type == zapcore.ErrorType && f.Interface == nil
}

// TestWalkMatchesZap holds Walk to zap's own reading of every field type:
// each leaf gets what Field.AddTo would give the encoder.
func TestWalkMatchesZap(t *testing.T) {
	for _, tc := range everyField {
		t.Run(tc.f.Key, func(t *testing.T) {
			got, leaf := walked(tc.f)
			if leaf != tc.leaf {
				t.Errorf("taken by %s, want %s", leaf, tc.leaf)
			}
			if want := byZap(tc.f); got != want && !unlikeZap(&tc.f) {
				t.Errorf("walk gave %s zap gave  %s", got, want)
			}
		})
	}
}

type ctxKey struct{}

// TestWalkSkipsTheEntrysOwn: a context (Context's Skip field, or zap.Any's
// Stringer or Reflect field) and EventName's field are the entry's, read
// by the root, never a value; a string field with another Interface is a
// string.
func TestWalkSkipsTheEntrysOwn(t *testing.T) {
	ctx := context.WithValue(context.Background(), ctxKey{}, 1)
	for _, f := range []zapcore.Field{
		{Key: "ctx", Type: zapcore.SkipType, Interface: ctx},
		zap.Any("ctx", context.Background()), // a Stringer
		{Key: "ctx", Type: zapcore.ReflectType, Interface: ctx},
		{Key: "event.name", Type: zapcore.StringType, String: "e", Interface: EventNameMark{}},
	} {
		if got, leaf := walked(f); leaf != "none" || got != "{}\n" {
			t.Errorf("%v: taken by %s as %v", f, leaf, got)
		}
	}
	if got, leaf := walked(zapcore.Field{Key: "k", Type: zapcore.StringType, String: "v", Interface: 1}); leaf != "String" || got != `{"k":"v"}`+"\n" {
		t.Errorf("a string with another Interface: taken by %s as %v", leaf, got)
	}
}

// FuzzWalk builds a field of any type from any integer and string, as a
// hand-made field may hold them, and holds Walk to zap's reading of it.
func FuzzWalk(f *testing.F) {
	f.Add(uint8(zapcore.Int8Type), int64(300), "")
	f.Add(uint8(zapcore.Uint64Type), int64(-1), "")
	f.Add(uint8(zapcore.UintptrType), int64(-1), "")
	f.Add(uint8(zapcore.TimeType), int64(1e18), "")
	f.Add(uint8(zapcore.Float64Type), int64(math.Float64bits(math.Copysign(0, -1))), "")
	f.Add(uint8(zapcore.StringType), int64(0), "\xff")
	f.Add(uint8(zapcore.BoolType), int64(2), "")
	f.Fuzz(func(t *testing.T, typ uint8, n int64, s string) {
		fld := zapcore.Field{Key: "k", Type: zapcore.FieldType(typ), Integer: n, String: s}
		got, _ := walked(fld)
		if want := byZap(fld); got != want && !unlikeZap(&fld) {
			t.Errorf("%+v: walk gave %v, zap gave %v", fld, got, want)
		}
	})
}

// declining is zapLeaves whose Nested declines, as the direct way's does.
type declining struct{ zapLeaves }

func (declining) Nested(int, *zapcore.Field) bool { return false }

// A leaf that declines ends the walk: Walk says so, and no later field
// reaches a leaf.
func TestWalkStopsWhereALeafDeclines(t *testing.T) {
	enc := newJSON()
	leaf := "none"
	fields := []zapcore.Field{zap.Int("a", 1), zap.Namespace("ns"), zap.Int("b", 2)}
	if Walk(declining{zapLeaves{enc: enc, leaf: &leaf}}, fields) {
		t.Error("Walk went on past a leaf that declined")
	}
	if got := jsonOf(enc); got != `{"a":1}`+"\n" {
		t.Errorf("written: %s", got)
	}
	if !Walk(zapLeaves{enc: newJSON(), leaf: &leaf}, fields) {
		t.Error("Walk declined where no leaf did")
	}
}
