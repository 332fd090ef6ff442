package otlpwire

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// The typed appenders write exactly what AppendAttr writes for the same
// attribute, under every limit, for keys and values of every length class
// and invalid UTF-8.
func TestTypedAttrsMatchAppendAttr(t *testing.T) {
	long := strings.Repeat("ab", 100)
	strs := []string{"", "k", "phase", long, strings.Repeat("é", 70), "bad\xffutf8", strings.Repeat("x", 20000), "abcdefg\xff"}
	limits := []Limits{
		DefaultLimits,
		{AttributeCount: 128, ValueLength: 3, CheckUTF8: true},
		{AttributeCount: -1, ValueLength: -1, CheckUTF8: true},
		{AttributeCount: 128, ValueLength: 0},
		{AttributeCount: 128, ValueLength: -1, UniqueMaps: true},
	}
	for _, lim := range limits {
		for _, key := range strs {
			check := func(what string, got []byte, kv attribute.KeyValue) {
				t.Helper()
				if want := AppendAttr(nil, kv, lim); !bytes.Equal(got, want) {
					t.Errorf("%s, key %.10q, limits %+v:\n got %x\nwant %x", what, key, lim, got, want)
				}
			}
			for _, v := range strs {
				check("string", AppendStringAttr(nil, key, v, &lim), attribute.String(key, v))
				check("text", AppendTextAttr(nil, key, []byte(v), &lim), attribute.String(key, ValidString(v)))
				check("bytes", AppendBytesAttr(nil, key, []byte(v), &lim),
					attribute.KeyValue{Key: attribute.Key(key), Value: attribute.ByteSliceValue([]byte(v))})
			}
			for _, v := range []int64{0, 1, -1, 127, 128, math.MaxInt64, math.MinInt64} {
				check("int", AppendIntAttr(nil, key, v, &lim), attribute.Int64(key, v))
			}
			for _, v := range []float64{0, -0.5, 3e-4, math.Inf(1), math.NaN()} {
				check("float", AppendFloatAttr(nil, key, v, &lim), attribute.Float64(key, v))
			}
			for _, v := range []bool{false, true} {
				check("bool", AppendBoolAttr(nil, key, v, &lim), attribute.Bool(key, v))
			}
			for _, kvs := range compositeEntries(strs) {
				sorted := attribute.MapValue(kvs...).AsMap() // the order MapValue keeps
				check("map", AppendMapAttr(nil, key, sorted, lim),
					attribute.KeyValue{Key: attribute.Key(key), Value: attribute.MapValue(kvs...)})
				vals := make([]attribute.Value, len(kvs))
				for i, kv := range kvs {
					vals[i] = kv.Value
				}
				check("slice", AppendSliceAttr(nil, key, kvs, lim),
					attribute.KeyValue{Key: attribute.Key(key), Value: attribute.SliceValue(vals...)})
			}
		}
	}
}

// compositeEntries are maps' entries and slices' elements of each kind: none,
// repeated keys, long and invalid strings, and values nested past the depth
// limit.
func compositeEntries(strs []string) [][]attribute.KeyValue {
	deep := attribute.StringValue("bottom")
	for range maxDepth + 2 {
		deep = attribute.SliceValue(deep, attribute.MapValue(attribute.Int("n", 1)))
	}
	var all []attribute.KeyValue
	for _, s := range strs {
		all = append(all, attribute.String(s, s))
	}
	return [][]attribute.KeyValue{
		nil,
		{attribute.Int("b", 2), attribute.Bool("a", true), attribute.Int("b", 3)},
		all,
		{{Key: "deep", Value: deep}, attribute.Float64("f", 0.5)},
		{{Key: "m", Value: attribute.MapValue(attribute.String("z", "1"), attribute.String("z", "2"))}},
	}
}

// A record written in three steps is the record AppendRecord writes, for
// a string body (the head's shortcut) and any other.
func TestStepsMatchAppendRecord(t *testing.T) {
	attrs := []attribute.KeyValue{attribute.String("a", "x"), attribute.Int("n", 3)}
	for _, body := range []attribute.Value{
		attribute.StringValue(""), attribute.StringValue("step done"),
		attribute.StringValue("bad\xff"), attribute.StringValue(strings.Repeat("m", 300)),
		attribute.IntValue(4), {},
	} {
		for _, lim := range []Limits{DefaultLimits, {AttributeCount: 1, ValueLength: 2, CheckUTF8: true}} {
			r := &Record{Severity: 9, SeverityText: "info", Body: body, Dropped: 2}
			want := AppendRecord(nil, r, attrs, lim)
			got := AppendHead(nil, r, &lim)
			dropped := r.Dropped
			for i, kv := range attrs {
				if i >= lim.AttributeCount {
					dropped++
					continue
				}
				got = AppendAttr(got, kv, lim)
			}
			got = AppendTail(got, r, dropped)
			if !bytes.Equal(got, want) {
				t.Errorf("body %v, limits %+v:\n got %x\nwant %x", body, lim, got, want)
			}
		}
	}
}
