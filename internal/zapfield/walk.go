package zapfield

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap/zapcore"
)

// Leaves is where Walk puts a field's value, one method per kind of
// value. Each returns false when its output cannot take the field, which
// ends the walk of the entry for that output (the direct way then gives
// the entry to the general one). i is the field's index in the entry, for
// an output that keeps what user code gave.
type Leaves interface {
	String(key, v string) bool
	Int(key string, v int64) bool
	// Uint is an unsigned value above MaxInt64, which no int64 holds.
	Uint(key string, v uint64) bool
	Float(key string, v float64) bool
	Bool(key string, v bool) bool
	Binary(key string, v []byte) bool
	ByteString(key string, v []byte) bool
	Time(key string, v time.Time) bool
	// Stringer is what a Stringer field's String gave: key and text,
	// or "<key>Error" and the panic (see stringerText).
	Stringer(i int, key, v string) bool
	// Value is an attribute.Value passed as zap.Any, kept as itself.
	Value(i int, f *zapcore.Field, v attribute.Value) bool
	// Error is a non-nil error field, for the leaf to read once with
	// ReadError. (Read here, the read would be copied into the call:
	// dearer than the leaf's call.)
	Error(i int, key string, err error) bool
	// Marshaled is a field whose conversion runs zap's Field.AddTo: an
	// object, an array, a reflected value, a float32, a complex, or a
	// field of any type made by hand with a value zap would panic on.
	Marshaled(i int, f *zapcore.Field) bool
	// Nested is a namespace or an inline marshaler, which nests what
	// follows, or a type zap does not know.
	Nested(i int, f *zapcore.Field) bool
}

// Walk reads each of fields and writes its value to l, until a leaf
// returns false, when Walk returns false. A leaf's i is its field's index
// in fields. Context fields (see ContextOf) and EventName's are the
// entry's, never attributes: Walk skips them. The loop is Walk's own, not
// its caller's, so that a field costs one call, its leaf's.
func Walk(l Leaves, fields []zapcore.Field) bool {
	for i := range fields {
		f := &fields[i]
		var ok bool
		switch f.Type {
		case zapcore.StringType:
			if IsEventName(f) {
				continue
			}
			ok = l.String(f.Key, f.String)
		case zapcore.Int64Type:
			ok = l.Int(f.Key, f.Integer)
		case zapcore.Float64Type:
			ok = l.Float(f.Key, math.Float64frombits(uint64(f.Integer)))
		case zapcore.BoolType:
			ok = l.Bool(f.Key, f.Integer == 1)
		case zapcore.BinaryType:
			if v, isBytes := f.Interface.([]byte); isBytes {
				ok = l.Binary(f.Key, v)
			} else {
				ok = l.Marshaled(i, f) // made by hand: zap's AddTo panics, guarded
			}
		case zapcore.ByteStringType:
			if v, isBytes := f.Interface.([]byte); isBytes {
				ok = l.ByteString(f.Key, v)
			} else {
				ok = l.Marshaled(i, f)
			}
		case zapcore.TimeType, zapcore.TimeFullType:
			if t, isTime := fieldTime(f); isTime {
				ok = l.Time(f.Key, t)
			} else {
				ok = l.Marshaled(i, f)
			}
		case zapcore.SkipType:
			continue
		case zapcore.StringerType:
			if _, isCtx := ContextOf(f); isCtx {
				continue
			}
			if v, isValue := f.Interface.(attribute.Value); isValue {
				ok = l.Value(i, f, v)
			} else {
				k, s := stringerText(f.Key, f.Interface)
				ok = l.Stringer(i, k, s)
			}
		case zapcore.ErrorType:
			if f.Interface == nil {
				continue // zap adds nothing
			}
			err, isErr := f.Interface.(error)
			if !isErr {
				// Made by hand with no error in it: zap's AddTo panics,
				// which the leaf tells as "<key>Error", as for any such field.
				ok = l.Marshaled(i, f)
				break
			}
			ok = l.Error(i, f.Key, err)
		case zapcore.ReflectType:
			if _, isCtx := ContextOf(f); isCtx {
				continue
			}
			ok = l.Marshaled(i, f)
		case zapcore.ObjectMarshalerType, zapcore.ArrayMarshalerType,
			zapcore.Float32Type, zapcore.Complex64Type, zapcore.Complex128Type:
			ok = l.Marshaled(i, f)
		default:
			ok = walkOther(l, i, f)
		}
		if !ok {
			return false
		}
	}
	return true
}

// walkOther walks the integers Walk does not name, a uint64 or uintptr
// above MaxInt64, and what nests or is unknown.
func walkOther(l Leaves, i int, f *zapcore.Field) bool {
	if v, ok := intField(f); ok {
		return l.Int(f.Key, v)
	}
	switch f.Type {
	case zapcore.Uint64Type:
		return l.Uint(f.Key, uint64(f.Integer)) // above MaxInt64: intField took the rest
	case zapcore.UintptrType:
		return l.Uint(f.Key, uint64(uintptr(f.Integer)))
	}
	return l.Nested(i, f)
}

// intField is the value of a field of an integer kind, durations
// included, cut to its width as zap's Field.AddTo cuts it; false for any
// other kind, and for a uint64 above MaxInt64, which is no int64.
func intField(f *zapcore.Field) (int64, bool) {
	switch f.Type {
	case zapcore.Int64Type, zapcore.DurationType:
		return f.Integer, true
	case zapcore.Int32Type:
		return int64(int32(f.Integer)), true
	case zapcore.Int16Type:
		return int64(int16(f.Integer)), true
	case zapcore.Int8Type:
		return int64(int8(f.Integer)), true
	case zapcore.Uint32Type:
		return int64(uint32(f.Integer)), true
	case zapcore.Uint16Type:
		return int64(uint16(f.Integer)), true
	case zapcore.Uint8Type:
		return int64(uint8(f.Integer)), true
	case zapcore.Uint64Type:
		return f.Integer, f.Integer >= 0
	case zapcore.UintptrType:
		v := uint64(uintptr(f.Integer)) // at its width, as zap's Field.AddTo reads it
		return int64(v), v <= math.MaxInt64
	}
	return 0, false
}

// fieldTime is the time of a zap.Time or zap.Time-like field, as zap's
// Field.AddTo reads it; false for a field whose Interface is not what zap
// puts there.
func fieldTime(f *zapcore.Field) (time.Time, bool) {
	if f.Type == zapcore.TimeFullType {
		t, ok := f.Interface.(time.Time)
		return t, ok
	}
	if f.Interface == nil {
		return time.Unix(0, f.Integer), true
	}
	loc, ok := f.Interface.(*time.Location)
	if !ok || loc == nil {
		return time.Time{}, false
	}
	return time.Unix(0, f.Integer).In(loc), true
}
