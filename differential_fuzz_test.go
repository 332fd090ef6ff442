package zaplens

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"go.uber.org/multierr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// FuzzWireMatchesSDK is the differential test (differential_test.go) with
// input made from the fuzzer's bytes: a little program of zap fields of
// every kind (keys repeating, values from the bytes), With, Named,
// namespaces, contexts and entries at every level, run on both bridges of
// both sides, and records of random attributes emitted straight to both
// providers. Both receivers must get the same records. One pair of
// receivers and providers serves the whole run; each input is flushed and
// compared on its own. Plain `go test` runs the seeds only.
func FuzzWireMatchesSDK(f *testing.F) {
	for _, seed := range [][]byte{
		nil,
		[]byte("\x00\x00akey\x04\x05hello"),
		// Every field kind once, then an entry.
		func() []byte {
			var b []byte
			for k := range byte(diffFuzzFieldKinds) {
				b = append(b, 0, k, byte(k*7), 0x81, 0xff, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 3, 'a', 0xff, 'b')
			}
			return append(b, 4, 1, 4, 'm', 's', 'g', 0xfe)
		}(),
		// With, Named, namespaces, an error entry, a switch to the tee.
		[]byte("\x00\x12\x01\x05\x00\x06\x03\x00\x08\x07\x06\x01\x04\x03\x03e\xffr\x07\x00\x15\x00\x04\x02\x00"),
		// Records emitted straight: many attributes, repeats, an error.
		[]byte("\x09\x01\x05\xc8\x02\x03\x07\x01\x09\x00\x18\x90\x11\x00\x03\x05\x09\x02\x81\x05\x06\x07\x08\x09\x0a"),
		[]byte("\x09\x03\xe8\xff\x09\x09\x09\x09\x09\x09\x09\x09\x00\x11\x13\x30{\"a\":{\"b\":[1,2.5,\"c\",null]}}\x04\x02\x00"),
	} {
		f.Add(seed)
	}
	// A record past the count limit, keys repeated on both sides of it.
	f.Add(func() []byte {
		b := []byte{9, 0, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 1, 0, 56}
		for i := range 156 {
			if i%9 == 8 {
				b = append(b, 200, 2, 1, 0) // the key of i-3
			} else {
				b = append(b, 0, 1, 1) // a new key
			}
		}
		return append(b, 1, 0)
	}())
	// And a few random programs, the same every run.
	rnd := rand.New(rand.NewPCG(6, 1))
	for _, n := range []int{100, 200, 300, 400, 500} {
		seed := make([]byte, n)
		for i := range seed {
			seed[i] = byte(rnd.Uint32())
		}
		f.Add(seed)
	}
	cleanEnv(f)
	pair := newDiffPair(f)
	bridged := func(s *commonpb.InstrumentationScope) bool { return !strings.HasPrefix(s.GetName(), "direct") }

	f.Fuzz(func(t *testing.T, data []byte) {
		steps := diffFuzzParse(data)
		// Nothing of an input before, one that failed say, is left.
		pair.flush(t)
		pair.take()
		start := time.Now()
		for _, s := range pair.sides() {
			st := &diffFuzzState{b: newDiffBridges(s.provider, newDiffClock()), p: s.provider}
			st.cur = st.b.core
			for _, step := range steps {
				step(st)
			}
		}
		n, report, _ := pair.compare(t, start, bridged)
		if report != "" {
			t.Fatalf("input %q:\n%s", data, report)
		}
		t.Logf("%d steps, %d records compared", len(steps), n)
	})
}

// diffFuzzState is where a program is in its run on one side.
type diffFuzzState struct {
	b       diffBridges
	p       log.LoggerProvider
	cur     *zap.Logger
	named   int // Named calls that made cur
	pending []zap.Field
}

type diffFuzzStep func(*diffFuzzState)

// diffFuzzInput reads the fuzzer's bytes; past their end it reads zeros.
type diffFuzzInput struct {
	data []byte
	i    int
}

func (in *diffFuzzInput) more() bool { return in.i < len(in.data) }

func (in *diffFuzzInput) byte() byte {
	if in.i >= len(in.data) {
		return 0
	}
	b := in.data[in.i]
	in.i++
	return b
}

func (in *diffFuzzInput) uint64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = in.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

// str is up to max bytes of the input, invalid UTF-8 and all.
func (in *diffFuzzInput) str(max int) string {
	n := min(int(in.byte())%(max+1), len(in.data)-in.i)
	s := string(in.data[in.i : in.i+n])
	in.i += n
	return s
}

// diffFuzzKeys are keys that collide on purpose: with each other, with the
// bridge's own (exception.*, code.*, errorCauses) and with invalid UTF-8.
var diffFuzzKeys = []string{
	"a", "b", "a.b", "dup", "error", "errorCauses", "errorVerbose", "exception.message",
	"exception.type", "exception.stacktrace", "code.line.number", "", "k\xff", "ns", "ünï", "zaplens.context",
}

func (in *diffFuzzInput) key() string {
	b := in.byte()
	if b < 224 {
		return diffFuzzKeys[int(b)%len(diffFuzzKeys)]
	}
	return in.str(12)
}

var diffFuzzLevels = []zapcore.Level{
	zapcore.DebugLevel, zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel,
	zapcore.InfoLevel, zapcore.Level(-3), zapcore.Level(9), zapcore.DPanicLevel,
}

var diffFuzzNames = []string{"a", "b", "bad\xffname", "", "x.y"}

// diffFuzzParse turns the input into a program of at most 64 steps, made
// of at most its first 1 KiB: inputs stay short, and so does the fuzzer's
// minimizing of them, each try of which sends two requests.
func diffFuzzParse(data []byte) []diffFuzzStep {
	in := &diffFuzzInput{data: data[:min(len(data), 1024)]}
	var steps []diffFuzzStep
	for len(steps) < 64 && in.more() {
		switch op := in.byte() % 10; op {
		case 0, 1, 2, 3:
			f := in.field(0)
			steps = append(steps, func(st *diffFuzzState) { st.pending = append(st.pending, f) })
		case 4:
			lvl := diffFuzzLevels[int(in.byte())%len(diffFuzzLevels)]
			msg := in.str(24)
			steps = append(steps, func(st *diffFuzzState) {
				st.cur.Log(lvl, msg, st.pending...)
				st.pending = nil
			})
		case 5:
			steps = append(steps, func(st *diffFuzzState) {
				st.cur = st.cur.With(st.pending...)
				st.pending = nil
			})
		case 6:
			// Names two deep at most: past 4096 scopes our provider
			// folds the rest into one, on purpose.
			name := diffFuzzNames[int(in.byte())%len(diffFuzzNames)]
			steps = append(steps, func(st *diffFuzzState) {
				if st.named < 2 {
					st.cur, st.named = st.cur.Named(name), st.named+1
				}
			})
		case 7:
			tee := in.byte()%2 == 1
			steps = append(steps, func(st *diffFuzzState) {
				st.cur, st.named = st.b.core, 0
				if tee {
					st.cur = st.b.tee
				}
			})
		case 8:
			k := in.key()
			steps = append(steps, func(st *diffFuzzState) { st.pending = append(st.pending, zap.Namespace(k)) })
		case 9:
			emit := in.record()
			steps = append(steps, func(st *diffFuzzState) { emit(st.p) })
		}
	}
	// Whatever is pending is logged at the end.
	steps = append(steps, func(st *diffFuzzState) {
		if len(st.pending) > 0 {
			st.cur.Info("rest", st.pending...)
		}
	})
	return steps
}

// diffFuzzFieldKinds is how many kinds of field the input chooses from.
const diffFuzzFieldKinds = 31

// field makes one zap field of a kind the input chooses; depth bounds
// objects in objects.
func (in *diffFuzzInput) field(depth int) zap.Field {
	kind := in.byte() % diffFuzzFieldKinds
	key := in.key()
	switch kind {
	case 0:
		return zap.Int64(key, int64(in.uint64()))
	case 1:
		return zap.Uint64(key, in.uint64())
	case 2:
		return zap.Float64(key, math.Float64frombits(in.uint64()))
	case 3:
		return zap.Float32(key, math.Float32frombits(uint32(in.uint64())))
	case 4:
		return zap.Complex128(key, complex(math.Float64frombits(in.uint64()), float64(int8(in.byte()))))
	case 5:
		return zap.Bool(key, in.byte()%2 == 1)
	case 6:
		return zap.String(key, in.str(24))
	case 7:
		return zap.ByteString(key, []byte(in.str(24)))
	case 8:
		return zap.Binary(key, []byte(in.str(24)))
	case 9:
		return zap.Stringer(key, diffStringer(in.str(24)))
	case 10:
		return zap.Duration(key, time.Duration(in.uint64()))
	case 11:
		zone := time.FixedZone("", int(int8(in.byte()))*15*60)
		return zap.Time(key, time.Unix(int64(in.uint64())>>20, int64(in.byte())*1e6).In(zone))
	case 12:
		ints := make([]int, in.byte()%5)
		for i := range ints {
			ints[i] = int(int16(in.uint64()))
		}
		return zap.Ints(key, ints)
	case 13:
		ss := make([]string, in.byte()%4)
		for i := range ss {
			ss[i] = in.str(8)
		}
		return zap.Strings(key, ss)
	case 14, 15:
		var o diffFuzzObject
		if depth < 3 {
			for range in.byte() % 4 {
				o = append(o, in.field(depth+1))
			}
		}
		if kind == 15 {
			return zap.Inline(o)
		}
		return zap.Object(key, o)
	case 16:
		return zap.Array(key, in.array(depth))
	case 17:
		s := in.str(64)
		var v any = s
		var decoded any
		if json.Unmarshal([]byte(s), &decoded) == nil {
			v = decoded
		}
		return zap.Reflect(key, v)
	case 18:
		return zap.Error(in.err())
	case 19:
		return zap.NamedError(key, in.err())
	case 20:
		return zap.Skip()
	case 21:
		switch in.byte() % 3 {
		case 0:
			return Context(diffFuzzSampled)
		case 1:
			return Context(diffFuzzUnsampled)
		}
		return Context(context.Background())
	case 22:
		return zap.Any(key, diffFuzzSampled)
	case 23:
		return zap.Uint64(key, math.MaxInt64+in.uint64()%1000)
	case 24:
		switch in.byte() % 5 {
		case 0:
			return zap.Stringer(key, diffPanicStringer{})
		case 1:
			return zap.Object(key, diffPanicObject{})
		case 2:
			return zap.Array(key, diffPanicArray{})
		case 3:
			return zap.Stringer(key, (*diffPtrStringer)(nil))
		}
		return zap.Object(key, diffFailObject{})
	case 25:
		return zap.Namespace(key)
	case 26:
		m := map[string]any{}
		for range in.byte() % 4 {
			m[in.key()] = in.str(8)
		}
		return zap.Reflect(key, m)
	case 27:
		return zap.Object(key, diffDeep(int(in.byte())%80))
	case 28:
		return zap.Any(key, []any{in.str(8), int(int8(in.byte())), nil, in.byte()%2 == 0})
	case 29:
		return EventName(in.str(8))
	}
	return zap.Int(key, int(int8(in.byte())))
}

// diffFuzzSampled and diffFuzzUnsampled are contexts with spans, fixed for
// the whole run so that a parsed program can hold them: ids made here,
// the same on both sides.
var (
	diffFuzzSampled = trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceFlags: trace.FlagsSampled,
	}))
	diffFuzzUnsampled = trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{8, 7, 6, 5, 4, 3, 2, 1},
	}))
)

// diffFuzzObject is an ObjectMarshaler made of fields.
type diffFuzzObject []zap.Field

func (o diffFuzzObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for _, f := range o {
		f.AddTo(enc)
	}
	return nil
}

// diffFuzzArray is an ArrayMarshaler made of appends.
type diffFuzzArray []func(zapcore.ArrayEncoder) error

func (a diffFuzzArray) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for _, f := range a {
		if err := f(enc); err != nil {
			return err
		}
	}
	return nil
}

func (in *diffFuzzInput) array(depth int) diffFuzzArray {
	var a diffFuzzArray
	for range in.byte() % 5 {
		switch in.byte() % 9 {
		case 0:
			v := int64(in.uint64())
			a = append(a, func(e zapcore.ArrayEncoder) error { e.AppendInt64(v); return nil })
		case 1:
			v := in.uint64()
			a = append(a, func(e zapcore.ArrayEncoder) error { e.AppendUint64(v); return nil })
		case 2:
			v := math.Float32frombits(uint32(in.uint64()))
			a = append(a, func(e zapcore.ArrayEncoder) error { e.AppendFloat32(v); return nil })
		case 3:
			v := in.str(12)
			a = append(a, func(e zapcore.ArrayEncoder) error { e.AppendString(v); return nil })
		case 4:
			v := []byte(in.str(12))
			a = append(a, func(e zapcore.ArrayEncoder) error { e.AppendByteString(v); return nil })
		case 5:
			v := time.Duration(in.uint64())
			a = append(a, func(e zapcore.ArrayEncoder) error { e.AppendDuration(v); return nil })
		case 6:
			if depth < 3 {
				inner := in.array(depth + 1)
				a = append(a, func(e zapcore.ArrayEncoder) error { return e.AppendArray(inner) })
			}
		case 7:
			var o diffFuzzObject
			if depth < 3 {
				for range in.byte() % 3 {
					o = append(o, in.field(depth+1))
				}
			}
			a = append(a, func(e zapcore.ArrayEncoder) error { return e.AppendObject(o) })
		default:
			v := in.str(12)
			a = append(a, func(e zapcore.ArrayEncoder) error { return e.AppendReflected(map[string]string{v: v}) })
		}
	}
	return a
}

// err makes an error of a kind the input chooses.
func (in *diffFuzzInput) err() error {
	switch in.byte() % 10 {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("wrap %s: %w", in.str(8), &diffTypedErr{code: int(in.byte())})
	case 2:
		return errors.Join(errors.New(in.str(8)), nil, diffFormatterErr{msg: in.str(8)})
	case 3:
		return multierr.Combine(errors.New(in.str(8)), errors.New(in.str(8)))
	case 4:
		return diffFormatterErr{msg: in.str(16)}
	case 5:
		return diffCodedErr{}
	case 6:
		return (*diffTypedErr)(nil)
	case 7:
		return diffPanicErr{}
	}
	return errors.New(in.str(24))
}

// recordErr is err without the errors whose Error method panics, which
// the SDK's Emit lets through to its caller, and with valid UTF-8 (see
// differential_test.go).
func (in *diffFuzzInput) recordErr() error {
	err := in.err()
	if _, ok := err.(diffPanicErr); ok {
		return errors.New("instead of a panicking error")
	}
	if e, ok := err.(*diffTypedErr); ok && e == nil {
		return errors.New("instead of a nil pointer")
	}
	if err != nil && !utf8.ValidString(err.Error()) {
		return errors.New(diffValid(err.Error())) // the SDK would send it raw
	}
	return err
}

// diffFuzzScopes are the scopes records are emitted to straight; names
// start with "direct" (or are empty), so that diffCompare tells them from
// the bridge's.
var diffFuzzScopes = []struct {
	name string
	opts []log.LoggerOption
}{
	{name: "direct"},
	{name: "direct", opts: []log.LoggerOption{log.WithInstrumentationVersion("v1")}},
	{name: "direct.attrs", opts: []log.LoggerOption{log.WithSchemaURL("https://example.com/s"), log.WithInstrumentationAttributes(
		attribute.String("", "x"), attribute.KeyValue{Key: "m", Value: attribute.MapValue(attribute.Int("k", 1), attribute.Int("k", 2))})}},
	{name: "direct.other"},
}

// record makes a record to emit straight to a provider. Its strings are
// valid UTF-8: invalid UTF-8 there is a deliberate difference (see
// differential_test.go).
func (in *diffFuzzInput) record() func(log.LoggerProvider) {
	scope := diffFuzzScopes[int(in.byte())%len(diffFuzzScopes)]
	var r log.Record
	r.SetSeverity(log.Severity(int8(in.byte())))
	r.SetSeverityText(diffValid(in.str(8)))
	r.SetTimestamp(time.Unix(0, int64(in.uint64())>>2))
	if b := in.byte(); b%3 == 0 {
		r.SetObservedTimestamp(time.Unix(int64(b), 0))
	}
	if in.byte()%4 == 0 {
		r.SetEventName(diffValid(in.str(8)))
	}
	r.SetBody(in.value(0))
	n := int(in.byte()) % 8 // mostly few, sometimes around the limit of 128
	if b := in.byte(); b%4 == 0 {
		n = 100 + int(b)%60
	}
	attrs := make([]attribute.KeyValue, 0, n)
	for i := range n {
		// Mostly a new key, to get past the limit's 128; else one
		// repeated, or one of the table's.
		var key string
		switch b := in.byte(); {
		case b < 160:
			key = fmt.Sprintf("k%d", i)
		case b < 224:
			key = fmt.Sprintf("k%d", max(0, i-1-int(in.byte())%8))
		default:
			key = diffValid(in.key())
		}
		attrs = append(attrs, attribute.KeyValue{Key: attribute.Key(key), Value: in.value(0)})
	}
	r.AddAttributes(attrs...)
	if in.byte()%3 == 0 {
		r.SetErr(in.recordErr())
	}
	span := in.byte() % 3
	return func(p log.LoggerProvider) {
		ctx := context.Background()
		switch span {
		case 1:
			ctx = diffFuzzSampled
		case 2:
			ctx = diffFuzzUnsampled
		}
		p.Logger(scope.name, scope.opts...).Emit(ctx, r)
	}
}

// value makes an attribute value of a kind the input chooses, maps with
// repeated keys included.
func (in *diffFuzzInput) value(depth int) attribute.Value {
	switch in.byte() % 14 {
	case 0:
		return attribute.Value{}
	case 1:
		return attribute.BoolValue(in.byte()%2 == 1)
	case 2:
		return attribute.Int64Value(int64(in.uint64()))
	case 3:
		return attribute.Float64Value(math.Float64frombits(in.uint64()))
	case 4:
		return attribute.ByteSliceValue([]byte(in.str(12)))
	case 5:
		return attribute.BoolSliceValue([]bool{in.byte()%2 == 0, true})
	case 6:
		return attribute.Int64SliceValue([]int64{int64(in.uint64()), -1})
	case 7:
		return attribute.Float64SliceValue([]float64{math.Float64frombits(in.uint64())})
	case 8:
		return attribute.StringSliceValue([]string{diffValid(in.str(8)), ""})
	case 9, 10:
		var vals []attribute.Value
		if depth < 4 {
			for range in.byte() % 4 {
				vals = append(vals, in.value(depth+1))
			}
		}
		return attribute.SliceValue(vals...)
	case 11, 12:
		var kvs []attribute.KeyValue
		if depth < 4 {
			for range in.byte() % 5 {
				kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(diffValid(in.key())), Value: in.value(depth + 1)})
			}
		}
		return attribute.MapValue(kvs...)
	case 13:
		if depth == 0 && in.byte()%4 == 0 {
			kinds := []attribute.Type{attribute.MAP, attribute.SLICE, attribute.BYTESLICE, attribute.INT64SLICE}
			return diffDeepValue(60+int(in.byte())%10, kinds[int(in.byte())%len(kinds)])
		}
	}
	return attribute.StringValue(diffValid(in.str(24)))
}

func diffValid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
