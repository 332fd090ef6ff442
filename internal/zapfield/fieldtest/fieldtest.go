// Package fieldtest holds what the conversion's tests (internal/zapfield)
// and the bridge's (the root package) both use: fields that hold what
// encoding/json prints badly, values that nest past the depth bound with a
// secret at the bottom, and an OTLP value read back as an attribute. Only
// tests import it.
package fieldtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"

	"go.opentelemetry.io/otel/attribute"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Cyclic holds itself through Next, for a cycle.
type Cyclic struct {
	Name string
	Next *Cyclic
}

// PanicTypeErr's ErrorType panics, and its Error does too on a nil
// pointer, as a method of a nil receiver would.
type PanicTypeErr struct{ Msg string }

func (e *PanicTypeErr) Error() string   { return e.Msg }
func (*PanicTypeErr) ErrorType() string { panic("type boom") }

// xy is a struct map key, which json refuses.
type xy struct{ X, Y int }

// keptErr is a typed error with exported fields, which json would print
// as them and not as its message.
type keptErr struct{ Code int }

func (e *keptErr) Error() string { return fmt.Sprintf("code %d", e.Code) }

// failJSON's MarshalJSON fails: the one element json cannot write.
type failJSON struct{}

func (failJSON) MarshalJSON() ([]byte, error) { return nil, errors.New("no json") }

type withErr struct {
	Err   error
	Typed *keptErr `json:"typed"`
	N     int
}

// KeptValueFields are reflected values that hold what json prints badly or
// refuses: errors, complex numbers, NaN and infinities, channels, funcs,
// struct map keys, attribute.Values, one element that fails, a cycle.
func KeptValueFields() []zap.Field {
	boom := errors.New("boom")
	cyc := &Cyclic{Name: "loop"}
	cyc.Next = cyc
	branching := make([]any, 2) // holds itself twice: 2^n steps to n levels
	branching[0], branching[1] = branching, branching
	return []zap.Field{
		zap.Any("errs", []any{boom, 1}),
		zap.Reflect("err", boom),
		zap.Any("errmap", map[string]error{"e": boom, "nil": nil}),
		zap.Any("errstruct", withErr{Err: boom, Typed: &keptErr{Code: 7}, N: 1}),
		zap.Any("patherr", []any{&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}}),
		zap.Any("complex", []any{1, complex(1, 2), "kept"}),
		zap.Any("nan", []any{1.5, math.NaN(), "kept"}),
		zap.Any("inf", map[string]any{"inf": math.Inf(1), "ch": make(chan int), "f": func() {}, "n": 1}),
		zap.Any("structkeys", map[xy]string{{1, 2}: "a"}),
		zap.Reflect("attr", attribute.StringSliceValue([]string{"foo", "bar"})),
		zap.Any("attr.any", attribute.StringSliceValue([]string{"foo", "bar"})),
		zap.Any("attr.inside", map[string]any{"v": attribute.IntValue(3), "bad\xff": attribute.StringValue("x\xff")}),
		zap.Any("onefails", []any{1, failJSON{}, "kept"}),
		zap.Reflect("topfails", failJSON{}),
		zap.Reflect("cycle", cyc),
		zap.Reflect("branching", branching),
		zap.Int("after", 1),
	}
}

// DeepObject nests itself N levels, with Secret under "token" at the
// bottom.
type DeepObject struct {
	N      int
	Secret string
}

func (o DeepObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	if o.N == 0 {
		enc.AddString("token", o.Secret)
		return nil
	}
	return enc.AddObject("in", DeepObject{o.N - 1, o.Secret})
}

// DeepArray nests arrays N levels, with an object holding Secret under
// "token" at the bottom.
type DeepArray struct {
	N      int
	Secret string
}

func (a DeepArray) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	if a.N == 0 {
		return enc.AppendObject(DeepObject{0, a.Secret})
	}
	return enc.AppendArray(DeepArray{a.N - 1, a.Secret})
}

// DeepMap nests maps n levels, for zap.Any, with secret under "token" at
// the bottom.
func DeepMap(n int, secret string) map[string]any {
	m := map[string]any{"token": secret}
	for range n {
		m = map[string]any{"in": m}
	}
	return m
}

// DeepJSON is a value whose MarshalJSON gives maps nested N levels, with
// Secret under "token" at the bottom: read back, it lies past the depth
// bound.
type DeepJSON struct {
	N      int
	Secret string
}

func (d DeepJSON) MarshalJSON() ([]byte, error) { return json.Marshal(DeepMap(d.N, d.Secret)) }

// AnyAttr is the attribute.Value an OTLP value encodes.
func AnyAttr(v *commonpb.AnyValue) attribute.Value {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return attribute.StringValue(x.StringValue)
	case *commonpb.AnyValue_IntValue:
		return attribute.Int64Value(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return attribute.BoolValue(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return attribute.Float64Value(x.DoubleValue)
	case *commonpb.AnyValue_BytesValue:
		return attribute.ByteSliceValue(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue:
		var vals []attribute.Value
		for _, e := range x.ArrayValue.GetValues() {
			vals = append(vals, AnyAttr(e))
		}
		return attribute.SliceValue(vals...)
	case *commonpb.AnyValue_KvlistValue:
		var kvs []attribute.KeyValue
		for _, kv := range x.KvlistValue.GetValues() {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(kv.GetKey()), Value: AnyAttr(kv.GetValue())})
		}
		return attribute.MapValue(kvs...)
	}
	return attribute.Value{}
}
