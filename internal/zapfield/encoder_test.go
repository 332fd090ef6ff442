package zapfield

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// Every zap field type, and what it becomes: the README's mapping table.
func TestFieldConversion(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.FixedZone("X", 3600))
	var nilIface error
	var nilPtr *point
	for _, tc := range []struct {
		field zap.Field
		want  string // attribute.Value.String() of the attribute under the field's key
		typ   attribute.Type
	}{
		{zap.Int("k", -3), "-3", attribute.INT64},
		{zap.Int8("k", -8), "-8", attribute.INT64},
		{zap.Int16("k", 16), "16", attribute.INT64},
		{zap.Int32("k", 32), "32", attribute.INT64},
		{zap.Int64("k", math.MinInt64), "-9223372036854775808", attribute.INT64},
		{zap.Uint("k", 7), "7", attribute.INT64},
		{zap.Uint8("k", 255), "255", attribute.INT64},
		{zap.Uint16("k", 65535), "65535", attribute.INT64},
		{zap.Uint32("k", math.MaxUint32), "4294967295", attribute.INT64},
		{zap.Uint64("k", math.MaxInt64), "9223372036854775807", attribute.INT64},
		{zap.Uint64("k", math.MaxUint64), "18446744073709551615", attribute.STRING},
		{zap.Uintptr("k", 0xdead), "57005", attribute.INT64},
		{zap.Float64("k", 0.41), "0.41", attribute.FLOAT64},
		{zap.Float32("k", 0.1), "0.1", attribute.FLOAT64},
		{zap.Complex128("k", complex(1, -2)), "(1-2i)", attribute.STRING},
		{zap.Complex64("k", complex(0.5, 1)), "(0.5+1i)", attribute.STRING},
		{zap.Bool("k", true), "true", attribute.BOOL},
		{zap.String("k", "v"), "v", attribute.STRING},
		{zap.ByteString("k", []byte("bytes")), "bytes", attribute.STRING},
		{zap.Binary("k", []byte{0, 1, 2}), "AAEC", attribute.BYTESLICE},
		{zap.Duration("k", 1500*time.Millisecond), "1500000000", attribute.INT64},
		{zap.Time("k", at), "2026-11-30T12:00:00.123456789+01:00", attribute.STRING},
		{zap.Time("k", time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)), "3000-01-01T00:00:00Z", attribute.STRING},
		{zap.Stringer("k", stringer("str")), "str", attribute.STRING},
		{zap.Object("k", point{1, 2}), `{"x":1,"y":2}`, attribute.MAP},
		{zap.Objects("k", []point{{1, 2}, {3, 4}}), `[{"x":1,"y":2},{"x":3,"y":4}]`, attribute.SLICE},
		{zap.Ints("k", []int{1, 2}), "[1,2]", attribute.SLICE},
		{zap.Strings("k", []string{"a", "b"}), `["a","b"]`, attribute.SLICE},
		{zap.Durations("k", []time.Duration{time.Second}), "[1000000000]", attribute.SLICE},
		{zap.Bools("k", []bool{true}), "[true]", attribute.SLICE},
		{zap.Uint64s("k", []uint64{math.MaxUint64}), `["18446744073709551615"]`, attribute.SLICE},
		{zap.Any("k", map[string]any{"b": 1, "a": []any{"x", 2.5, nil}}), `{"a":["x",2.5,null],"b":1}`, attribute.MAP},
		{zap.Any("k", struct {
			Name string `json:"name"`
			N    uint64
		}{"s", math.MaxUint64}), `{"N":"18446744073709551615","name":"s"}`, attribute.MAP},
		{zap.Reflect("k", nil), "", attribute.EMPTY},
		{zap.Reflect("k", nilPtr), "", attribute.EMPTY},
		{zap.Any("k", nilIface), "", attribute.EMPTY},
		{zap.NamedError("k", errors.New("e")), "e", attribute.STRING},
	} {
		t.Run(tc.field.Key+"/"+tc.want, func(t *testing.T) {
			e := GetEncoder()
			defer PutEncoder(e)
			addOne(e, tc.field)
			kvs := e.result()
			// The direct way, held to the same table: both ways read
			// the field with the same walk, which a comparison of the
			// two ways alone would not fault.
			if got, ok := directValue(t, tc.field); tc.typ != attribute.EMPTY && (!ok || got.String() != tc.want || got.Type() != tc.typ) {
				t.Errorf("direct way: %v: %s %q (written: %v), want %s %q", tc.field.Type, got.Type(), got.String(), ok, tc.typ, tc.want)
			}
			if tc.typ == attribute.EMPTY && len(kvs) == 0 {
				return // zap.Any(nil error) is zap.Skip
			}
			if len(kvs) != 1 || kvs[0].Key != "k" {
				t.Fatalf("%v gave %v", tc.field, kvs)
			}
			if got := kvs[0].Value; got.String() != tc.want || got.Type() != tc.typ {
				t.Errorf("%v: %s %q, want %s %q", tc.field.Type, got.Type(), got.String(), tc.typ, tc.want)
			}
		})
	}
}

func TestReflectLimits(t *testing.T) {
	loop := &fieldtest.Cyclic{Name: "loop"}
	loop.Next = loop
	e := GetEncoder()
	defer PutEncoder(e)
	addOne(e, zap.Reflect("cyc", loop))
	var deep any = "leaf"
	for range 100 {
		deep = []any{deep}
	}
	addOne(e, zap.Reflect("deep", deep))
	got := map[string]attribute.Value{}
	for _, kv := range e.result() {
		got[string(kv.Key)] = kv.Value
	}
	if s := got["cycError"].AsString(); s == "" {
		t.Errorf("a cyclic value gave no error: %v", got)
	}
	depth, v := 0, got["deep"]
	for v.Type() == attribute.SLICE {
		v, depth = v.AsSlice()[0], depth+1
	}
	if depth != maxReflectDepth || v.Type() != attribute.STRING {
		t.Errorf("deep value kept %d levels then %s, want %d then its JSON", depth, v.Type(), maxReflectDepth)
	}
}

func TestInlineAndSkip(t *testing.T) {
	e := GetEncoder()
	defer PutEncoder(e)
	e.addFields([]zap.Field{zap.Inline(point{5, 6}), zap.Skip(), {Key: "zaplens.context", Type: zapcore.SkipType, Interface: context.Background()}})
	if got := attribute.MapValue(e.result()...).String(); got != `{"x":5,"y":6}` {
		t.Errorf("inline gave %s", got)
	}
}

// everyType appends one element of each kind an ArrayEncoder takes.
type everyType struct{}

func (everyType) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	enc.AppendBool(true)
	enc.AppendByteString([]byte("bs"))
	enc.AppendComplex128(complex(1, 2))
	enc.AppendComplex64(complex(3, 4))
	enc.AppendFloat64(1.5)
	enc.AppendFloat32(0.1)
	enc.AppendInt(-1)
	enc.AppendInt64(-64)
	enc.AppendInt32(-32)
	enc.AppendInt16(-16)
	enc.AppendInt8(-8)
	enc.AppendString("s")
	enc.AppendUint(1)
	enc.AppendUint64(math.MaxUint64)
	enc.AppendUint32(32)
	enc.AppendUint16(16)
	enc.AppendUint8(8)
	enc.AppendUintptr(7)
	enc.AppendDuration(time.Second)
	enc.AppendTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err := enc.AppendArray(zapcore.ArrayMarshalerFunc(func(inner zapcore.ArrayEncoder) error {
		inner.AppendInt(1)
		return nil
	})); err != nil {
		return err
	}
	if err := enc.AppendObject(point{1, 2}); err != nil {
		return err
	}
	return enc.AppendReflected(map[string]int{"r": 1})
}

func TestArrayOfEveryType(t *testing.T) {
	e := GetEncoder()
	defer PutEncoder(e)
	addOne(e, zap.Array("k", everyType{}))
	want := `[true,"bs","(1+2i)","(3+4i)",1.5,0.1,-1,-64,-32,-16,-8,"s",1,"18446744073709551615",32,16,8,7,1000000000,"2026-01-02T03:04:05Z",[1],{"x":1,"y":2},{"r":1}]`
	if got := attribute.MapValue(e.result()...).AsMap()[0].Value.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e2 := GetEncoder()
	defer PutEncoder(e2)
	e2.addFields([]zap.Field{zap.Int32("i32", -32), zap.Int16("i16", -16), zap.Int8("i8", -8), zap.Uint("u", 1)})
	if got := attribute.MapValue(e2.result()...).String(); got != `{"i16":-16,"i32":-32,"i8":-8,"u":1}` {
		t.Errorf("small ints: %s", got)
	}
}

// everyKey adds one value of each kind an ObjectEncoder takes, each at
// the edge of its width, so that a method that cuts or widens a value
// wrongly shows.
type everyKey struct{}

func (everyKey) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddBinary("bin", []byte{0, 1, 2})
	enc.AddByteString("bs", []byte("bs"))
	enc.AddBool("b", true)
	enc.AddComplex128("c128", complex(1, -2))
	enc.AddComplex64("c64", complex(0.5, 1))
	enc.AddDuration("d", -1500*time.Millisecond)
	enc.AddFloat64("f64", 0.41)
	enc.AddFloat32("f32", 0.1)
	enc.AddInt("i", math.MinInt32)
	enc.AddInt64("i64", math.MinInt64)
	enc.AddInt32("i32", math.MinInt32)
	enc.AddInt16("i16", math.MinInt16)
	enc.AddInt8("i8", math.MinInt8)
	enc.AddString("s", "s")
	enc.AddTime("t", time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
	enc.AddUint("u", math.MaxUint32)
	enc.AddUint64("u64", math.MaxUint64)
	enc.AddUint32("u32", math.MaxUint32)
	enc.AddUint16("u16", math.MaxUint16)
	enc.AddUint8("u8", math.MaxUint8)
	enc.AddUintptr("p", 0xdead)
	if err := enc.AddArray("a", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
		a.AppendInt32(math.MaxInt32)
		return nil
	})); err != nil {
		return err
	}
	if err := enc.AddObject("o", point{1, 2}); err != nil {
		return err
	}
	if err := enc.AddReflected("r", map[string]int{"r": 1}); err != nil {
		return err
	}
	enc.OpenNamespace("ns")
	enc.AddInt16("in", math.MaxInt16)
	return nil
}

// An object marshaler's values, each through its own ObjectEncoder
// method: the fields' walk reads none of them, so TestFieldConversion
// holds none of these methods.
func TestObjectOfEveryType(t *testing.T) {
	e := GetEncoder()
	defer PutEncoder(e)
	addOne(e, zap.Object("k", everyKey{}))
	want := `{"a":[2147483647],"b":true,"bin":"AAEC","bs":"bs","c128":"(1-2i)","c64":"(0.5+1i)","d":-1500000000,` +
		`"f32":0.1,"f64":0.41,"i":-2147483648,"i16":-32768,"i32":-2147483648,"i64":-9223372036854775808,"i8":-128,` +
		`"ns":{"in":32767},"o":{"x":1,"y":2},"p":57005,"r":{"r":1},"s":"s","t":"2026-01-02T03:04:05.000000006Z",` +
		`"u":4294967295,"u16":65535,"u32":4294967295,"u64":"18446744073709551615","u8":255}`
	if got := attribute.MapValue(e.result()...).AsMap()[0].Value.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// nested is an object marshaler n levels deep, with an array every other
// level.
type nested int

func (n nested) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddInt("n", int(n))
	if n == 0 {
		return nil
	}
	if n%2 == 0 {
		return enc.AddArray("a", zapcore.ArrayMarshalerFunc(func(a zapcore.ArrayEncoder) error {
			return a.AppendObject(n - 1)
		}))
	}
	return enc.AddObject("o", n-1)
}

// Objects and arrays from marshalers keep their structure to
// maxValueDepth, then the rest as its JSON text: nothing is cut silently.
func TestDeepMarshalersKeptAsJSON(t *testing.T) {
	e := GetEncoder()
	defer PutEncoder(e)
	addOne(e, zap.Object("deep", nested(101)))
	v := e.result()[0].Value
	depth := 0
	for v.Type() == attribute.MAP || v.Type() == attribute.SLICE {
		depth++
		if v.Type() == attribute.SLICE {
			v = v.AsSlice()[0]
			continue
		}
		for _, kv := range v.AsMap() {
			if kv.Key != "n" {
				v = kv.Value
			}
		}
	}
	if depth != maxValueDepth || v.Type() != attribute.STRING {
		t.Fatalf("kept %d levels then %s, want %d then JSON", depth, v.Type(), maxValueDepth)
	}
	var rest any
	if err := json.Unmarshal([]byte(v.AsString()), &rest); err != nil {
		t.Fatalf("the rest is not JSON: %v", err)
	}
	if s := v.AsString(); !strings.Contains(s, `"n":0`) {
		t.Errorf("the rest lost the deepest level: %.200s", s)
	}
}

// addOne adds f to e, as addFields adds each field.
func addOne(e *Encoder, f zapcore.Field) { e.addFields([]zapcore.Field{f}) }

// directBytes is the record the direct way writes for fields alone, with
// no With, under the SDK's default limits, if it takes them. It holds the
// direct way to leaving its encoder as clean as it found it but for what
// it converted: a general way after it must start from nothing else.
func directBytes(fields []zapcore.Field) ([]byte, bool) {
	e := GetEncoder()
	defer PutEncoder(e)
	var rec otlpwire.Record
	b, ok := e.AppendDirect(nil, &With{}, &rec, &zapcore.Entry{Message: "m"}, fields, otlpwire.DefaultLimits)
	if len(e.kvs)+len(e.top)+len(e.frames) > 0 || e.hasErr {
		panic("AppendDirect left its scratch encoder dirty")
	}
	return b, ok
}

// directValue is the value the direct way writes for f alone under "k",
// decoded; false when it does not write the entry, or writes no "k".
func directValue(t *testing.T, f zapcore.Field) (attribute.Value, bool) {
	b, ok := directBytes([]zapcore.Field{f})
	if !ok {
		return attribute.Value{}, false
	}
	var rec logpb.LogRecord
	if err := proto.Unmarshal(b, &rec); err != nil {
		t.Fatalf("the direct way's record: %v", err)
	}
	for _, kv := range rec.GetAttributes() {
		if kv.GetKey() == "k" {
			return fieldtest.AnyAttr(kv.GetValue()), true
		}
	}
	return attribute.Value{}, false
}

// An ErrorType field made by hand with no error in it is told, as any
// hand-made field zap's AddTo panics on: "<key>Error", the panic's text,
// on both ways; it was dropped silently before.
func TestHandMadeErrorFieldWithNoError(t *testing.T) {
	f := zapcore.Field{Key: "k", Type: zapcore.ErrorType, Interface: "not an error"}
	e := GetEncoder()
	defer PutEncoder(e)
	addOne(e, f)
	kvs := e.result()
	if len(kvs) != 1 || kvs[0].Key != "kError" || !strings.HasPrefix(kvs[0].Value.AsString(), "PANIC=interface conversion") {
		t.Fatalf("general way gave %v, want kError: PANIC=interface conversion...", kvs)
	}
	b, ok := directBytes([]zapcore.Field{f})
	if !ok {
		t.Fatal("the direct way did not take it") // its Marshaled leaf converts it, as the general way does
	}
	var rec logpb.LogRecord
	if err := proto.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	attrs := rec.GetAttributes()
	if len(attrs) != 1 || attrs[0].GetKey() != "kError" || attrs[0].GetValue().GetStringValue() != kvs[0].Value.AsString() {
		t.Fatalf("direct way gave %v, want %v", attrs, kvs)
	}
}

// An ErrorType that panics leaves the exception as it was (here, the
// first zap.Error's) and says so under errorError, as zap says it for a
// panicking Error.
func TestPanickingErrorTypeKeepsException(t *testing.T) {
	e := GetEncoder()
	defer PutEncoder(e)
	e.addFields([]zapcore.Field{zap.Error(errors.New("first")), zap.Error(&fieldtest.PanicTypeErr{Msg: "second"})})
	got := map[string]string{}
	for _, kv := range e.result() {
		got[string(kv.Key)] = kv.Value.String()
	}
	if got[KeyExceptionMessage] != "first" || got["errorError"] != "PANIC=type boom" || !e.hasErr {
		t.Errorf("attributes %v", got)
	}
}

// An entry of a thousand zap.Errors, which the direct way takes (the last
// one wins), leaves no room in the pooled encoder the size of its memo.
func TestDirectKeepsNoHugeMemo(t *testing.T) {
	fields := make([]zapcore.Field, 1000)
	for i := range fields {
		fields[i] = zap.Error(errors.New("e"))
	}
	e := GetEncoder()
	defer PutEncoder(e)
	var rec otlpwire.Record
	if _, ok := e.AppendDirect(nil, &With{}, &rec, &zapcore.Entry{}, fields, otlpwire.DefaultLimits); !ok {
		t.Fatal("the direct way did not take it")
	}
	e.direct.forget()
	if c, k := cap(e.direct.conv), cap(e.direct.converted); c > maxPooledAttrs || k > maxPooledAttrs {
		t.Errorf("kept room for %d attributes and %d conversions", c, k)
	}
}

// Release leaves an Encoder as empty as NewEncoder made it, whatever its
// entry went through (the direct way declining it after converting an
// object and an exception, then the general way), the bridge's
// EntryState included: a pooled Encoder carries nothing into the next
// entry. One whose room a huge entry grew is not worth reusing; a huge
// slot's room is dropped.
func TestReleaseEmpties(t *testing.T) {
	e := NewEncoder()
	fields := []zapcore.Field{zap.Object("o", point{1, 2}), zap.Error(errors.New("boom")), zap.Int("a", 1), zap.Int("a", 2)}
	huge := make([]zapcore.Field, maxPooledAttrs+1)
	for i := range huge {
		huge[i] = zap.Int(strconv.Itoa(i), i)
	}
	for _, tc := range []struct {
		name   string
		fields []zapcore.Field
		slot   int // the slot's room
		reuse  bool
	}{{"an entry the direct way declined", fields, 1, true}, {"a huge entry", huge, maxPooledAttrs + 1, false}} {
		e.Entry.Redact = otlpwire.NewRedactor("token")
		e.Entry.Added = append(make([]attribute.KeyValue, 0, tc.slot), attribute.String("tenant", "acme"))
		var rec otlpwire.Record
		if _, ok := e.AppendDirect(nil, &With{}, &rec, &zapcore.Entry{}, tc.fields, otlpwire.DefaultLimits); ok {
			t.Fatalf("%s: the direct way took it", tc.name)
		}
		e.Attributes(&With{}, &zapcore.Entry{Stack: "s"}, tc.fields)
		if reuse := e.Release(); reuse != tc.reuse {
			t.Errorf("%s: Release says worth reusing %v, want %v", tc.name, reuse, tc.reuse)
		}
		d := &e.direct
		if e.Entry.Redact != nil || len(e.Entry.Added) != 0 || cap(e.Entry.Added) > maxPooledAttrs {
			t.Errorf("%s: the entry's state is left: %+v (room for %d)", tc.name, e.Entry, cap(e.Entry.Added))
		}
		if len(e.kvs)+len(e.top)+len(e.frames) != 0 || e.hasErr || e.err != nil || e.depth != 0 || e.hold || e.held != (heldValue{}) {
			t.Errorf("%s: the general way's state is left: %d attributes, %d exception's, %d namespaces, error %v", tc.name, len(e.kvs), len(e.top), len(e.frames), e.err)
		}
		if len(d.conv)+len(d.converted)+len(d.keys)+len(d.b) != 0 || d.exception.set || d.exception.err != nil {
			t.Errorf("%s: what the direct way converted is left: %d attributes, %d fields, exception %v", tc.name, len(d.conv), len(d.converted), d.exception.err)
		}
	}
}
