package zapfield

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// Errors inside a value become their message; what json cannot write is
// written as well as it can be, the rest of the value kept, and
// "<key>Error" tells only of what was left out.
func TestReflectedValuesKeepWhatJSONLoses(t *testing.T) {
	e := GetEncoder()
	defer PutEncoder(e)
	for _, f := range fieldtest.KeptValueFields() {
		addOne(e, f)
	}
	got := map[string]attribute.Value{}
	for _, kv := range e.result() {
		got[string(kv.Key)] = kv.Value
	}
	for key, want := range map[string]string{
		"errs":        `["boom",1]`,
		"err":         "boom",
		"errmap":      `{"e":"boom","nil":null}`,
		"errstruct":   `{"Err":"boom","N":1,"typed":"code 7"}`,
		"patherr":     `["open /x: file does not exist"]`,
		"complex":     `[1,"(1+2i)","kept"]`,
		"nan":         `[1.5,"NaN","kept"]`,
		"inf":         `{"ch":"chan int","f":"func()","inf":"Infinity","n":1}`,
		"structkeys":  `{"{X:1 Y:2}":"a"}`,
		"attr":        `["foo","bar"]`,
		"attr.any":    `["foo","bar"]`,
		"attr.inside": "{\"bad\uFFFD\":\"x\uFFFD\",\"v\":3}",
		"onefails":    `[1,null,"kept"]`,
		"after":       "1",
	} {
		if s := got[key].String(); s != want {
			t.Errorf("%s = %s %s, want %s", key, got[key].Type(), s, want)
		}
	}
	if got["attr"].Type() != attribute.STRINGSLICE || got["attr.any"].Type() != attribute.STRINGSLICE {
		t.Errorf("attribute values not kept as themselves: %s, %s", got["attr"].Type(), got["attr.any"].Type())
	}
	if s := got["nan"].AsSlice(); len(s) != 3 || s[1].Type() != attribute.FLOAT64 || !math.IsNaN(s[1].AsFloat64()) {
		t.Errorf("NaN: %s", got["nan"].String())
	}
	for _, key := range []string{"errs", "err", "errmap", "errstruct", "patherr", "complex", "nan", "inf", "structkeys", "attr", "attr.any", "attr.inside"} {
		if v, ok := got[key+"Error"]; ok {
			t.Errorf("%sError = %q, though nothing was left out", key, v.AsString())
		}
	}
	if s := got["onefailsError"].AsString(); !strings.Contains(s, "no json") {
		t.Errorf("onefailsError = %q, want the marshaler's error", s)
	}
	if _, ok := got["topfails"]; ok || !strings.Contains(got["topfailsError"].AsString(), "no json") {
		t.Errorf("a value left out whole: %v, %v", got["topfails"], got["topfailsError"])
	}
	if s := got["cycleError"].AsString(); !strings.Contains(s, "cycle") || got["cycle"].AsMap()[0].Value.AsString() != "loop" {
		t.Errorf("a cycle: %s, error %q; want the value to the cycle and the error", got["cycle"].String(), s)
	}
	if s := got["branchingError"].AsString(); !strings.Contains(s, "cycle") || got["branching"].String() != "[null,null]" {
		t.Errorf("a value holding itself twice: %s, error %q", got["branching"].String(), s)
	}
}

// What json writes is written as json writes it: struct tags, omitempty,
// omitzero, ",string", embedded structs and their ties, MarshalJSON and
// MarshalText on values and pointers, json.Number, []byte as base64.
func TestReflectedValuesFollowJSON(t *testing.T) {
	type Inner struct {
		A int
		B string `json:"b"`
	}
	type Tie1 struct{ T int }
	type Tie2 struct{ T int }
	type outer struct {
		Inner
		*Tie1
		Tie2
		Named      Inner  `json:"named"`
		Skip       int    `json:"-"`
		Empty      string `json:",omitempty"`
		Zero       point  `json:",omitzero"`
		Quoted     int    `json:",string"`
		Num        json.Number
		Bytes      []byte
		Level      zapcore.Level
		LevelPtr   *zapcore.Level
		unexported int
	}
	lvl := zapcore.WarnLevel
	v := outer{Inner: Inner{A: 1, B: "b"}, Tie1: &Tie1{T: 1}, Tie2: Tie2{T: 2}, Named: Inner{A: 2}, Skip: 3,
		Quoted: 5, Num: "12345678901234567890", Bytes: []byte{0, 1}, Level: zapcore.ErrorLevel, LevelPtr: &lvl, unexported: 6}
	want, err := jsonAttribute(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reflectedValue(v, nil)
	if err != nil || got.String() != want.String() {
		t.Errorf("got %s (%v)\nwant %s", got.String(), err, want.String())
	}
}

// jsonAttribute is v as encoding/json writes it, read back.
func jsonAttribute(v any) (attribute.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return attribute.Value{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return attribute.Value{}, err
	}
	return jsonValue(tree, 0), nil
}
