package zapfield

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// maxReflectDepth bounds how deep a reflected value keeps its structure;
// below it, what is left is kept as its JSON text, so nothing is lost and a
// pathological value cannot make a pathological attribute.
const maxReflectDepth = 32

// maxValueDepth is the same bound for objects and arrays from marshalers.
const maxValueDepth = 32

// reflectedValue converts v the way encoding/json, and so zap's JSON
// encoder, prints it: MarshalJSON and MarshalText, struct tags, omitempty
// and omitzero are honoured. Where json would print a value badly or not
// at all, it is kept as well as it can be, as the official bridge keeps
// it, and only that element: an error is its Error() text, a complex
// number its text, NaN and infinities the doubles they are, a channel or
// func its type's name, a map key json refuses its %+v text, an
// attribute.Value itself. The error returned tells what was left out (a
// marshaler's error, a cycle); then the value holds everything else, or,
// when the value itself was left out, is empty. What red matches is
// redacted where the value becomes text, past the depth bound, where no key
// is left for the provider's encoder to see.
func reflectedValue(v any, red *otlpwire.Redactor) (attribute.Value, error) {
	r := reflector{redact: red}
	val, ok := r.value(reflect.ValueOf(v), 0)
	if !ok {
		return attribute.Value{}, r.lost
	}
	return val, r.lost
}

// reflector walks one reflected value.
type reflector struct {
	lost   error              // the first thing left out
	redact *otlpwire.Redactor // the provider's, for the text made past the depth bound
	// path holds the pointers, maps and slices above where the walk is:
	// one met again is a cycle, left out where it closes. json looks for
	// one only past 1,000 levels, and fails the whole value, and a value
	// that holds itself twice would take it 2^1000 steps to get there.
	path []pathKey
}

type pathKey struct {
	p uintptr
	n int
	t reflect.Type
}

// leaveOut notes err, the first thing left out, and reports the element
// gone.
func (r *reflector) leaveOut(err error) (attribute.Value, bool) {
	if r.lost == nil {
		r.lost = err
	}
	return attribute.Value{}, false
}

// value converts v, depth levels down; false when v is left out.
func (r *reflector) value(v reflect.Value, depth int) (attribute.Value, bool) {
	for v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if !v.IsValid() {
		return attribute.Value{}, true
	}
	if v.Kind() == reflect.Pointer {
		return r.pointer(v, depth)
	}
	t := v.Type()
	if m := methodsOf(t); m != 0 && v.CanInterface() {
		if val, ok, done := r.byMethod(v, m, depth); done {
			return val, ok
		}
	}
	switch v.Kind() {
	case reflect.Bool:
		return attribute.BoolValue(v.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return attribute.Int64Value(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintValue(v.Uint()), true
	case reflect.Float32:
		return float32Value(float32(v.Float())), true
	case reflect.Float64:
		return attribute.Float64Value(v.Float()), true
	case reflect.Complex64:
		return complexValue(v.Complex(), 64), true
	case reflect.Complex128:
		return complexValue(v.Complex(), 128), true
	case reflect.String:
		if t == jsonNumberType {
			return numberValue(json.Number(v.String())), true
		}
		return StringValue(v.String()), true
	case reflect.Slice:
		if v.IsNil() {
			return attribute.Value{}, true
		}
		if t.Elem().Kind() == reflect.Uint8 && methodsOf(reflect.PointerTo(t.Elem()))&(hasJSON|hasText) == 0 {
			return attribute.StringValue(base64.StdEncoding.EncodeToString(v.Bytes())), true
		}
		return r.nested(v, depth)
	case reflect.Map:
		if v.IsNil() {
			return attribute.Value{}, true
		}
		return r.nested(v, depth)
	case reflect.Array, reflect.Struct:
		return r.nested(v, depth)
	}
	// A channel, a func, an unsafe pointer: json refuses them; their
	// type's name is all there is to tell.
	return attribute.StringValue(t.String()), true
}

// pointer follows a pointer, which json writes as what it points to, or
// null; as json calls a method on the pointer, the walk calls it on the
// value it points to, which is addressable.
func (r *reflector) pointer(v reflect.Value, depth int) (attribute.Value, bool) {
	if v.IsNil() {
		return attribute.Value{}, true
	}
	if m := methodsOf(v.Type()); m&isError != 0 && m&(hasJSON|hasText) == 0 && v.CanInterface() {
		return StringValue(v.Interface().(error).Error()), true // most errors are pointers
	}
	if !r.enter(v) {
		return r.cycle(v)
	}
	defer r.leave()
	return r.value(v.Elem(), depth)
}

// nested converts a slice, array, map or struct: as a structure above
// maxReflectDepth, as its JSON text at it.
func (r *reflector) nested(v reflect.Value, depth int) (attribute.Value, bool) {
	if v.Kind() == reflect.Map || v.Kind() == reflect.Slice {
		if !r.enter(v) {
			return r.cycle(v)
		}
		defer r.leave()
	}
	var val attribute.Value
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		val = r.slice(v, depth)
	case reflect.Map:
		val = r.mapValue(v, depth)
	default:
		val = r.structValue(v, depth)
	}
	if depth == maxReflectDepth {
		return deepText(r.redact.Value(val)), true
	}
	return val, true
}

// enter puts v on the path, or reports false when it is there already: a
// cycle. The path is as long as the value is deep, a few levels: a scan
// costs less than a map.
func (r *reflector) enter(v reflect.Value) bool {
	k := pathKey{p: uintptr(v.UnsafePointer()), t: v.Type()}
	if v.Kind() == reflect.Slice {
		k.n = v.Len()
	}
	if slices.Contains(r.path, k) {
		return false
	}
	r.path = append(r.path, k)
	return true
}

func (r *reflector) leave() { r.path = r.path[:len(r.path)-1] }

// cycle leaves out a value met again inside itself, with json's error.
func (r *reflector) cycle(v reflect.Value) (attribute.Value, bool) {
	return r.leaveOut(fmt.Errorf("json: unsupported value: encountered a cycle via %s", v.Type()))
}

// byMethod converts v by the method json would call, MarshalJSON or
// MarshalText, or, json's {} for it aside, by its Error; done is false
// when v has none of them to call.
func (r *reflector) byMethod(v reflect.Value, m methods, depth int) (val attribute.Value, ok, done bool) {
	if m&isAttrValue != 0 {
		return validValue(v.Interface().(attribute.Value)), true, true
	}
	if m&isTime != 0 {
		return timeValue(v.Interface().(time.Time)), true, true
	}
	addr := v.CanAddr()
	switch {
	case m&hasJSON != 0:
		val, ok = r.marshaled(v.Interface().(json.Marshaler), depth)
	case m&addrJSON != 0 && addr:
		val, ok = r.marshaled(v.Addr().Interface().(json.Marshaler), depth)
	case m&hasText != 0:
		val, ok = r.text(v.Interface().(encoding.TextMarshaler))
	case m&addrText != 0 && addr:
		val, ok = r.text(v.Addr().Interface().(encoding.TextMarshaler))
	case m&isError != 0:
		val, ok = StringValue(v.Interface().(error).Error()), true
	default:
		return attribute.Value{}, false, false
	}
	return val, ok, true
}

// marshaled is what MarshalJSON gives, read as a value.
func (r *reflector) marshaled(m json.Marshaler, depth int) (attribute.Value, bool) {
	b, err := m.MarshalJSON()
	if err != nil {
		return r.leaveOut(fmt.Errorf("json: error calling MarshalJSON for type %T: %w", m, err))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return r.leaveOut(fmt.Errorf("json: error calling MarshalJSON for type %T: %w", m, err))
	}
	if r.redact != nil {
		redactTree(r.redact, tree) // jsonValue makes text of what lies past the bound
	}
	return jsonValue(tree, depth), true
}

// text is what MarshalText gives, as a string.
func (r *reflector) text(m encoding.TextMarshaler) (attribute.Value, bool) {
	b, err := m.MarshalText()
	if err != nil {
		return r.leaveOut(fmt.Errorf("json: error calling MarshalText for type %T: %w", m, err))
	}
	return StringValue(string(b)), true
}

// deepText is a value past maxReflectDepth: its JSON text, as OpenTelemetry
// renders a value for a protocol other than OTLP.
func deepText(v attribute.Value) attribute.Value {
	if t := v.Type(); t == attribute.SLICE || t == attribute.MAP {
		return attribute.StringValue(v.String())
	}
	return v
}

func (r *reflector) slice(v reflect.Value, depth int) attribute.Value {
	vals := make([]attribute.Value, v.Len())
	for i := range vals {
		vals[i], _ = r.value(v.Index(i), depth+1)
	}
	return attribute.SliceValue(vals...)
}

func (r *reflector) mapValue(v reflect.Value, depth int) attribute.Value {
	kvs := make([]attribute.KeyValue, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		k, ok := r.mapKey(it.Key())
		if !ok {
			continue
		}
		val, _ := r.value(it.Value(), depth+1)
		kvs = append(kvs, attribute.KeyValue{Key: validKey(k), Value: val})
	}
	return attribute.MapValue(otlpwire.Dedup(kvs)...) // which sorts by key
}

// mapKey is a map key as json writes it; one json refuses, its %+v text,
// as the official bridge writes it.
func (r *reflector) mapKey(k reflect.Value) (string, bool) {
	switch k.Kind() {
	case reflect.String:
		return k.String(), true
	}
	if m := methodsOf(k.Type()); m&hasText != 0 && k.CanInterface() {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", true
		}
		b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			_, _ = r.leaveOut(fmt.Errorf("json: error calling MarshalText for type %s: %w", k.Type(), err))
			return "", false
		}
		return string(b), true
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), true
	}
	return fmt.Sprintf("%+v", k), true
}

func (r *reflector) structValue(v reflect.Value, depth int) attribute.Value {
	fields := jsonFieldsOf(v.Type())
	kvs := make([]attribute.KeyValue, 0, len(fields))
	for i := range fields {
		f := &fields[i]
		fv, ok := fieldByIndex(v, f.index)
		if !ok || f.omitted(fv) {
			continue
		}
		var val attribute.Value
		if f.quote {
			val = quotedValue(fv)
		} else {
			val, _ = r.value(fv, depth+1)
		}
		kvs = append(kvs, attribute.KeyValue{Key: validKey(f.name), Value: val})
	}
	return attribute.MapValue(kvs...)
}

// fieldByIndex is v's field at index, false when an embedded pointer on
// the way is nil, as json skips it.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for _, i := range index {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return v, true
}

// quotedValue is a field tagged ",string": json's text of it, as a string.
func quotedValue(v reflect.Value) attribute.Value {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return attribute.Float64Value(f)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return attribute.Value{}
		}
		v = v.Elem()
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return StringValue(fmt.Sprint(v.Interface()))
	}
	return StringValue(string(b))
}

// jsonValue converts what json.Decoder gives (with UseNumber) to a value.
func jsonValue(v any, depth int) attribute.Value {
	switch v := v.(type) {
	case nil:
		return attribute.Value{}
	case bool:
		return attribute.BoolValue(v)
	case string:
		return attribute.StringValue(v)
	case json.Number:
		return numberValue(v)
	}
	var val attribute.Value
	switch v := v.(type) {
	case []any:
		vals := make([]attribute.Value, len(v))
		for i, e := range v {
			vals[i] = jsonValue(e, depth+1)
		}
		val = attribute.SliceValue(vals...)
	case map[string]any:
		kvs := make([]attribute.KeyValue, 0, len(v))
		for k, e := range v {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: jsonValue(e, depth+1)})
		}
		val = attribute.MapValue(kvs...) // which sorts by key
	}
	if depth == maxReflectDepth {
		return deepText(val)
	}
	return val
}

// numberValue keeps integers exact: an int64 when it fits, a uint64 above
// MaxInt64 as its digits, anything else a float.
func numberValue(n json.Number) attribute.Value {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return attribute.Int64Value(i)
	}
	if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
		return uintValue(u)
	}
	if f, err := n.Float64(); err == nil && !math.IsInf(f, 0) {
		return attribute.Float64Value(f)
	}
	return StringValue(string(n))
}

// validValue is an attribute.Value given whole, its strings and keys made
// valid UTF-8 as the bridge makes those it writes; a valid value, nearly
// every one, is returned as it is.
func validValue(v attribute.Value) attribute.Value {
	switch v.Type() {
	case attribute.STRING:
		return StringValue(v.AsString())
	case attribute.STRINGSLICE:
		ss := v.AsStringSlice()
		for i, s := range ss {
			ss[i] = validString(s)
		}
		return attribute.StringSliceValue(ss)
	case attribute.SLICE:
		vals := v.AsSlice()
		for i, e := range vals {
			vals[i] = validValue(e)
		}
		return attribute.SliceValue(vals...)
	case attribute.MAP:
		kvs := v.AsMap()
		for i, kv := range kvs {
			kvs[i] = attribute.KeyValue{Key: validKey(string(kv.Key)), Value: validValue(kv.Value)}
		}
		return attribute.MapValue(otlpwire.Dedup(kvs)...)
	}
	return v
}
