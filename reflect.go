package zaplens

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// maxReflectDepth bounds how deep a reflected value keeps its structure;
// below it, what is left is kept as its JSON text, so nothing is lost and a
// pathological value cannot make a pathological attribute.
const maxReflectDepth = 32

// maxValueDepth is the same bound for objects and arrays from marshalers.
const maxValueDepth = 32

// reflectedValue converts v through encoding/json, the way zap's JSON
// encoder prints it: MarshalJSON, struct tags and omitempty are honoured, and
// a cyclic value fails with json's own error, which becomes "<key>Error".
// What r matches is redacted in the tree: past the depth bound it becomes
// text, where no key is left for the provider's encoder to see.
func reflectedValue(v any, r *otlpwire.Redactor) (attribute.Value, error) {
	if v == nil {
		return attribute.Value{}, nil
	}
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
	if r != nil {
		redactTree(r, tree)
	}
	return jsonValue(tree, 0), nil
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
	if depth >= maxReflectDepth {
		b, _ := json.Marshal(v)
		return attribute.StringValue(string(b))
	}
	switch v := v.(type) {
	case []any:
		vals := make([]attribute.Value, len(v))
		for i, e := range v {
			vals[i] = jsonValue(e, depth+1)
		}
		return attribute.SliceValue(vals...)
	case map[string]any:
		kvs := make([]attribute.KeyValue, 0, len(v))
		for k, e := range v {
			kvs = append(kvs, attribute.KeyValue{Key: attribute.Key(k), Value: jsonValue(e, depth+1)})
		}
		return attribute.MapValue(kvs...) // which sorts by key
	}
	return attribute.Value{}
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
	return attribute.StringValue(string(n))
}
