package zaplens_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

// fuzzSink is an sdklog.Processor that keeps the records it is handed.
type fuzzSink struct {
	mu   sync.Mutex
	recs []sdklog.Record
}

func (s *fuzzSink) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (s *fuzzSink) OnEmit(_ context.Context, r *sdklog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r.Clone())
	return nil
}
func (s *fuzzSink) Shutdown(context.Context) error   { return nil }
func (s *fuzzSink) ForceFlush(context.Context) error { return nil }

func (s *fuzzSink) take() []sdklog.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.recs
	s.recs = nil
	return r
}

type fuzzStringer string

func (f fuzzStringer) String() string { return string(f) }

// FuzzFieldConversion logs one entry carrying every kind of zap field built
// from the fuzzed values, through the bridge alone into the real OTel SDK,
// and checks that nothing panics, that exactly one record comes out, that
// every key and string in it is valid UTF-8 (OTLP refuses a whole batch
// otherwise), and that each field kept its value as the README's mapping
// says. The seed corpus in testdata/fuzz/FuzzFieldConversion runs with every
// `go test`; `go test -fuzz=FuzzFieldConversion` explores further.
func FuzzFieldConversion(f *testing.F) {
	f.Add("step done", "key", "value", int64(42), uint64(7), 0.41, []byte("raw"))
	f.Add("", "", "", int64(0), uint64(0), 0.0, []byte(nil))
	f.Add("bad \xff body", "k\xfe", "v\xc3\x28", int64(-1), uint64(math.MaxUint64), math.Inf(-1), []byte{0xff, 0x00})
	f.Add("ns", "a.b", `{"nested":{"x":[1,2,{"y":null}]}}`, int64(math.MinInt64), uint64(math.MaxInt64)+1, math.NaN(), []byte(`{"k":1}`))

	sink := &fuzzSink{}
	provider := sdklog.NewLoggerProvider(sdklog.WithProcessor(sink))
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(provider), zaplens.WithLevel(zapcore.DebugLevel)))

	f.Fuzz(func(t *testing.T, msg, key, s string, i int64, u uint64, fl float64, b []byte) {
		// The fixed keys below start with "f."; a fuzzed key that could
		// collide with them or with the bridge's own keys is not this
		// test's business.
		if strings.HasPrefix(key, "f.") || strings.HasPrefix(key, "exception.") || strings.HasPrefix(key, "code.") {
			return
		}
		// Reflect gets the JSON s decodes to (maps, slices, numbers, deep
		// nesting), or s itself.
		var reflected any = s
		var decoded any
		if json.Unmarshal([]byte(s), &decoded) == nil {
			reflected = decoded
		}
		when := time.Unix(0, i).UTC()
		logger.Named(key).Info(msg,
			zap.String(key, s),
			zap.String("f.string", s),
			zap.ByteString("f.bytestring", b),
			zap.Binary("f.binary", b),
			zap.Int64("f.int64", i),
			zap.Uint64("f.uint64", u),
			zap.Float64("f.float64", fl),
			zap.Float32("f.float32", float32(fl)),
			zap.Complex128("f.complex", complex(fl, float64(i))),
			zap.Bool("f.bool", i%2 == 0),
			zap.Duration("f.duration", time.Duration(i)),
			zap.Time("f.time", when),
			zap.Stringer("f.stringer", fuzzStringer(s)),
			zap.Strings("f.strings", []string{s, key, msg}),
			zap.Reflect("f.reflect", reflected),
			zap.Any("f.map", map[string]any{key: s, "n": i}),
			zap.Object("f.object", zapcore.ObjectMarshalerFunc(func(enc zapcore.ObjectEncoder) error {
				enc.AddString(key, s)
				enc.AddUint64("u", u)
				return nil
			})),
			zap.Error(errors.New(s)),
			zap.Namespace("f.ns"),
			zap.String("inner", s),
			zap.Int64("n", i),
		)
		recs := sink.take()
		if len(recs) != 1 {
			t.Fatalf("got %d records, want 1", len(recs))
		}
		rec := recs[0]

		if got, want := rec.Body().AsString(), strings.ToValidUTF8(msg, "\uFFFD"); got != want {
			t.Errorf("body %q, want %q", got, want)
		}
		if name := rec.InstrumentationScope().Name; !utf8.ValidString(name) {
			t.Errorf("scope name %q is not valid UTF-8", name)
		}
		attrs := map[string]attribute.Value{}
		rec.WalkAttributes(func(kv attribute.KeyValue) bool {
			fuzzCheckUTF8(t, string(kv.Key), kv.Value)
			attrs[string(kv.Key)] = kv.Value
			return true
		})

		vs := strings.ToValidUTF8(s, "\uFFFD")
		fuzzWant(t, attrs, "f.string", attribute.StringValue(vs))
		fuzzWant(t, attrs, "f.bytestring", attribute.StringValue(strings.ToValidUTF8(string(b), "\uFFFD")))
		fuzzWant(t, attrs, "f.int64", attribute.Int64Value(i))
		if u > math.MaxInt64 {
			fuzzWant(t, attrs, "f.uint64", attribute.StringValue(strconv.FormatUint(u, 10)))
		} else {
			fuzzWant(t, attrs, "f.uint64", attribute.Int64Value(int64(u)))
		}
		if got, ok := attrs["f.float64"]; !ok || got.Type() != attribute.FLOAT64 ||
			math.Float64bits(got.AsFloat64()) != math.Float64bits(fl) && !(math.IsNaN(fl) && math.IsNaN(got.AsFloat64())) {
			t.Errorf("f.float64 = %v, want %v", got.String(), fl)
		}
		fuzzWant(t, attrs, "f.complex", attribute.StringValue(strconv.FormatComplex(complex(fl, float64(i)), 'g', -1, 128)))
		fuzzWant(t, attrs, "f.bool", attribute.BoolValue(i%2 == 0))
		fuzzWant(t, attrs, "f.duration", attribute.Int64Value(i))
		fuzzWant(t, attrs, "f.time", attribute.StringValue(when.Format(time.RFC3339Nano)))
		fuzzWant(t, attrs, "f.stringer", attribute.StringValue(vs))
		fuzzWant(t, attrs, "exception.message", attribute.StringValue(vs))
		if got := attrs["f.binary"]; got.Type() != attribute.BYTESLICE || string(got.AsByteSlice()) != string(b) {
			t.Errorf("f.binary = %v (%v), want the bytes %q", got.String(), got.Type(), b)
		}
		if got := attrs["f.strings"]; got.Type() != attribute.SLICE || len(got.AsSlice()) != 3 {
			t.Errorf("f.strings = %v (%v), want a 3-element slice", got.String(), got.Type())
		}
		for _, k := range []string{"f.object", "f.map", "f.ns"} {
			if got := attrs[k]; got.Type() != attribute.MAP {
				t.Errorf("%s = %v (%v), want a map", k, got.String(), got.Type())
			}
		}
		if _, ok := attrs["f.reflect"]; !ok {
			if _, failed := attrs["f.reflectError"]; !failed {
				t.Errorf("f.reflect is missing and no f.reflectError says why")
			}
		}
		// zap's Namespace: the fields after it nest under it, and only there.
		ns := map[string]attribute.Value{}
		for _, kv := range attrs["f.ns"].AsMap() {
			ns[string(kv.Key)] = kv.Value
		}
		fuzzWant(t, ns, "inner", attribute.StringValue(vs))
		fuzzWant(t, ns, "n", attribute.Int64Value(i))
		if _, leaked := attrs["inner"]; leaked {
			t.Errorf("a field after the namespace is also at the top level")
		}
	})
}

func fuzzWant(t *testing.T, attrs map[string]attribute.Value, key string, want attribute.Value) {
	t.Helper()
	got, ok := attrs[key]
	if !ok {
		t.Errorf("%s is missing", key)
		return
	}
	if got.Type() != want.Type() || got.String() != want.String() {
		t.Errorf("%s = %s %q, want %s %q", key, got.Type(), got.String(), want.Type(), want.String())
	}
}

// fuzzCheckUTF8 checks a key and every string inside a value, maps and
// slices included.
func fuzzCheckUTF8(t *testing.T, key string, v attribute.Value) {
	t.Helper()
	if !utf8.ValidString(key) {
		t.Errorf("key %q is not valid UTF-8", key)
	}
	switch v.Type() {
	case attribute.STRING:
		if !utf8.ValidString(v.AsString()) {
			t.Errorf("%s: value %q is not valid UTF-8", key, v.AsString())
		}
	case attribute.STRINGSLICE:
		for _, s := range v.AsStringSlice() {
			if !utf8.ValidString(s) {
				t.Errorf("%s: element %q is not valid UTF-8", key, s)
			}
		}
	case attribute.SLICE:
		for _, e := range v.AsSlice() {
			fuzzCheckUTF8(t, key+"[]", e)
		}
	case attribute.MAP:
		for _, kv := range v.AsMap() {
			fuzzCheckUTF8(t, key+"."+string(kv.Key), kv.Value)
		}
	}
}
