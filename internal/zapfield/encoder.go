package zapfield

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// Semantic-convention keys of the attributes an entry itself gives: its
// caller and its stack.
const (
	KeyFilePath       = "code.file.path"
	KeyLineNumber     = "code.line.number"
	KeyFunctionName   = "code.function.name"
	KeyCodeStacktrace = "code.stacktrace"
	KeyExceptionStack = "exception.stacktrace"
)

// frame is an open zap namespace: every attribute from start on nests under
// key once the frame closes.
type frame struct {
	key   string
	start int
}

// Encoder converts one entry's fields, either way: to OTel attributes
// (Attributes, the general way) or to OTLP bytes (AppendDirect, the
// direct way), both walking the fields with Walk and differing only in
// their leaves (attrLeaves, wireLeaves). It is a zapcore.ObjectEncoder, so
// zap's own Field.AddTo drives the general way for what runs user code,
// and every field type keeps zap's semantics: namespaces, inline
// marshalers, "<key>Error" for a marshaler that fails.
//
// The contract with its caller, the bridge: take an empty Encoder
// (GetEncoder, or NewEncoder for one kept in a struct); set Entry, the
// entry's state the leaves read; write the entry with AppendDirect, or
// with Attributes (the bridge goes straight there when the direct way is
// closed to the entry: another provider, a span event), or with
// Attributes after AppendDirect declined it, on the same Encoder, which
// then reuses what AppendDirect converted so that no user code runs
// twice; then, once what either returned is sent, Release it (PutEncoder
// does), and only then reuse it. A logger's With fields are converted
// with an Encoder of their own, taken and released alike. An Encoder is
// one entry's, never shared between goroutines.
type Encoder struct {
	kvs    []attribute.KeyValue // attributes of all open levels, flattened
	frames []frame              // open namespaces, outermost first
	top    []attribute.KeyValue // attributes that stay outside namespaces: exception.*
	hasErr bool                 // top already holds an exception
	err    error                // the exception's error, for log.Record.SetErr
	depth  int                  // how deep in a value this encoder's level lies
	direct directWriter         // the direct way's state (see wire.go), kept for its room
	hold   bool                 // the field's own object or array is to be held (see heldValue)
	held   heldValue
	// Entry is the entry's state, the bridge's to set before either way
	// writes it.
	Entry EntryState
}

// EntryState is what the bridge gives the conversion of one entry beyond
// its fields and its With: what a leaf needs to know of the entry and
// cannot read from a field. The bridge sets it on an empty Encoder before
// writing the entry; it is kept until the entry is written, either way,
// and emptied by Release. A new feature that adds attributes to entries
// adds them to Added and nothing here; a new kind of state a leaf needs is
// a new field here, documented for both ways.
type EntryState struct {
	// Redact is the provider's redactor, nil for none, for the text the
	// conversion makes of values past the depth bound, where no key is
	// left for the provider's encoder to redact by.
	Redact *otlpwire.Redactor
	// Added is the one slot for the attributes features add to the entry
	// (the bridge's ctxattrs.go: WithBaggage's, read from the context).
	// Both ways write them after the entry's own, caller and stack
	// included: a repeated key sends the direct way's entry the general
	// way, where the slot's attribute wins.
	Added []attribute.KeyValue
}

// A heldValue is the object or array a field becomes, held as its entries,
// kvs[:n], not yet built into a map or slice value: the direct way writes
// the entries straight to the record, and a value built and read back
// costs two allocations. Held, the entries are what the value would hold:
// a map's deduplicated and sorted by key as attribute.MapValue sorts them,
// a slice's elements as the values of keyless attributes.
type heldValue struct {
	kind heldKind
	key  attribute.Key
	n    int
}

type heldKind uint8

const (
	heldNone heldKind = iota
	heldMap
	heldSlice
)

// attr builds the held value from its entries, for the general way.
func (h heldValue) attr(entries []attribute.KeyValue) attribute.KeyValue {
	if h.kind == heldMap {
		return attribute.KeyValue{Key: h.key, Value: attribute.MapValue(entries...)}
	}
	vals := make([]attribute.Value, len(entries))
	for i, kv := range entries {
		vals[i] = kv.Value
	}
	return attribute.KeyValue{Key: h.key, Value: attribute.SliceValue(vals...)}
}

// holds tells whether a value about to be added under no open level is
// the field's own, to hold: asked for, and nothing added before it.
func (e *Encoder) holds(level int) bool {
	return e.hold && level == 0 && len(e.kvs) == 0 && e.held.kind == heldNone
}

// maxPooledAttrs keeps one huge entry from pinning a huge buffer in the pool.
const maxPooledAttrs = 256

var encoderPool = sync.Pool{New: func() any {
	e := NewEncoder()
	return &e
}}

// NewEncoder is an empty Encoder, its buffer sized for a typical entry:
// its fields, the caller, an exception and a stack.
func NewEncoder() Encoder {
	return Encoder{kvs: make([]attribute.KeyValue, 0, 16)}
}

// GetEncoder takes an empty Encoder from the pool.
func GetEncoder() *Encoder { return encoderPool.Get().(*Encoder) }

// PutEncoder releases e and gives it back to the pool, when it is worth
// keeping.
func PutEncoder(e *Encoder) {
	if e.Release() {
		encoderPool.Put(e)
	}
}

// Release empties e once its entry is written, either way, and reports
// whether it is worth reusing. What the direct way converted is forgotten
// here and nowhere else: until the entry is written the general way may
// need it.
func (e *Encoder) Release() bool {
	e.direct.forget()
	e.Entry.Redact = nil
	clear(e.Entry.Added)
	e.Entry.Added = e.Entry.Added[:0]
	if cap(e.Entry.Added) > maxPooledAttrs {
		e.Entry.Added = nil
	}
	return e.reset()
}

// reset empties e for reuse, and reports whether it is worth reusing: one
// huge entry must not pin a huge buffer.
func (e *Encoder) reset() bool {
	if cap(e.kvs) > maxPooledAttrs || cap(e.top) > maxPooledAttrs {
		*e = Encoder{direct: e.direct, Entry: e.Entry} // an entry on the direct way may be under way
		return false
	}
	clear(e.kvs)
	clear(e.top)
	e.kvs, e.frames, e.top = e.kvs[:0], e.frames[:0], e.top[:0]
	e.hasErr, e.err = false, nil
	e.hold, e.held, e.depth = false, heldValue{}, 0
	return true
}

// addFields adds every field but the ones that carry a context. Those the
// direct way has converted already (it gave the entry up after them) are
// taken as it converted them, so that their user code does not run again;
// the walk takes the fields between them.
func (e *Encoder) addFields(fields []zapcore.Field) {
	d := &e.direct
	x, from := &d.exception, 0
	for _, c := range d.converted {
		Walk(attrLeaves{e}, fields[from:c.index])
		e.addConverted(c, d.conv[c.start:c.end])
		if x.set && x.index == c.index { // an exception's field is one converted
			e.setException(x.err, x.attrs...)
		}
		from = c.index + 1
	}
	Walk(attrLeaves{e}, fields[from:])
}

// attrLeaves are the general way's Leaves: each value becomes an
// attribute of e. A field whose conversion runs zap's Field.AddTo runs it
// on e, a zapcore.ObjectEncoder, guarded.
type attrLeaves struct{ e *Encoder }

func (l attrLeaves) String(k, v string) bool        { l.e.addString(k, v); return true }
func (l attrLeaves) Int(k string, v int64) bool     { l.e.AddInt64(k, v); return true }
func (l attrLeaves) Uint(k string, v uint64) bool   { l.e.AddUint64(k, v); return true }
func (l attrLeaves) Float(k string, v float64) bool { l.e.AddFloat64(k, v); return true }
func (l attrLeaves) Bool(k string, v bool) bool     { l.e.AddBool(k, v); return true }
func (l attrLeaves) Binary(k string, v []byte) bool { l.e.AddBinary(k, v); return true }
func (l attrLeaves) ByteString(k string, v []byte) bool {
	l.e.AddByteString(k, v)
	return true
}
func (l attrLeaves) Time(k string, v time.Time) bool { l.e.AddTime(k, v); return true }
func (l attrLeaves) Stringer(_ int, k, v string) bool {
	l.e.addString(k, v)
	return true
}
func (l attrLeaves) Value(_ int, f *zapcore.Field, v attribute.Value) bool {
	l.e.add(f.Key, validValue(v))
	return true
}
func (l attrLeaves) Error(_ int, k string, err error) bool {
	l.e.addError(k, err)
	return true
}
func (l attrLeaves) Marshaled(_ int, f *zapcore.Field) bool { l.e.addFieldGuarded(*f); return true }
func (l attrLeaves) Nested(_ int, f *zapcore.Field) bool    { l.e.addFieldGuarded(*f); return true }

// addFieldGuarded adds a field whose conversion may run user code. A panic
// there (a marshaler, a reflected value) undoes what the field had added and
// becomes "<key>Error", as zap does for a Stringer.
func (e *Encoder) addFieldGuarded(f zapcore.Field) {
	nkv, nframes := len(e.kvs), len(e.frames)
	defer func() {
		if r := recover(); r != nil {
			e.kvs, e.frames, e.held = e.kvs[:nkv], e.frames[:nframes], heldValue{}
			e.addString(PanicRead(f.Key, f.Interface, r))
		}
	}()
	f.AddTo(e)
}

// Attributes converts the entry the general way and returns its
// attributes, made unique: w's, the fields', the entry's own (its caller
// and stack), Entry.Added last. Those the direct way converted already,
// when it declined the entry, are taken as it converted them. They are e's
// until Release.
func (e *Encoder) Attributes(w *With, ent *zapcore.Entry, fields []zapcore.Field) []attribute.KeyValue {
	e.seed(w)
	e.addFields(fields)
	e.addEntry(ent)
	e.top = append(e.top, e.Entry.Added...)
	return e.result()
}

// Err is the error of the entry's exception, for log.Record.SetErr, once
// Attributes has run: the last zap.Error's, w's if the entry has none.
func (e *Encoder) Err() error { return e.err }

// addEntry adds what the entry itself carries: its caller and its stack.
func (e *Encoder) addEntry(ent *zapcore.Entry) {
	if ent.Caller.Defined {
		e.top = append(e.top,
			StringAttr(KeyFilePath, ent.Caller.File),
			attribute.Int(KeyLineNumber, ent.Caller.Line))
		if ent.Caller.Function != "" {
			e.top = append(e.top, StringAttr(KeyFunctionName, ent.Caller.Function))
		}
	}
	if ent.Stack != "" {
		key := KeyCodeStacktrace
		if e.hasErr {
			key = KeyExceptionStack
		}
		e.top = append(e.top, StringAttr(key, ent.Stack))
	}
}

// result closes every open namespace and returns the attributes, the
// exception ones last.
func (e *Encoder) result() []attribute.KeyValue {
	e.closeFrames(0)
	e.kvs = otlpwire.Dedup(append(e.kvs, e.top...))
	return e.kvs
}

// closeFrames closes the open namespaces down to depth, folding each one's
// attributes into a map under its key.
func (e *Encoder) closeFrames(depth int) {
	for len(e.frames) > depth {
		f := e.frames[len(e.frames)-1]
		e.frames = e.frames[:len(e.frames)-1]
		v := attribute.MapValue(otlpwire.Dedup(e.kvs[f.start:])...)
		clear(e.kvs[f.start:])
		e.kvs = append(e.kvs[:f.start], attribute.KeyValue{Key: validKey(f.key), Value: v})
	}
}

func (e *Encoder) add(key string, v attribute.Value) {
	e.kvs = append(e.kvs, attribute.KeyValue{Key: validKey(key), Value: v})
}

func (e *Encoder) addString(key, s string) { e.add(key, StringValue(s)) }

// addError maps zap.Error's field to exception.message and exception.type;
// any other error field keeps its key, with the message as its value. Both
// keep zap's "<key>Causes" and "<key>Verbose".
func (e *Encoder) addError(key string, err error) {
	r := ReadError(key, err)
	if r.Exception {
		// The last zap.Error wins, as any repeated key does; top holds
		// nothing but its attributes until the entry's own are added.
		e.setException(err)
		e.top = r.AppendException(e.top)
		return
	}
	e.addString(r.Key, r.Msg)
	e.kvs = r.AppendDetails(e.kvs)
}

// setException makes attrs, of err, the record's exception, replacing any
// earlier one.
func (e *Encoder) setException(err error, attrs ...attribute.KeyValue) {
	clear(e.top)
	e.hasErr, e.err, e.top = true, err, append(e.top[:0], attrs...)
}

// The zapcore.ObjectEncoder methods, which Field.AddTo and marshalers call.

// AddArray adds an array marshaler's elements as a slice.
func (e *Encoder) AddArray(key string, m zapcore.ArrayMarshaler) error {
	level := e.depth + len(e.frames)
	if level >= maxValueDepth {
		return e.addJSON(key, func(enc zapcore.ObjectEncoder) error { return enc.AddArray(key, m) })
	}
	a := getArrayEncoder(level+1, e.Entry.Redact)
	defer putArrayEncoder(a)
	err := m.MarshalLogArray(a)
	if e.holds(level) {
		for _, v := range a.vals {
			e.kvs = append(e.kvs, attribute.KeyValue{Value: v})
		}
		e.held = heldValue{kind: heldSlice, key: validKey(key), n: len(a.vals)}
		return err
	}
	e.add(key, attribute.SliceValue(a.vals...))
	return err
}

// AddObject adds an object marshaler's fields as a map, namespaces it opens
// included.
func (e *Encoder) AddObject(key string, m zapcore.ObjectMarshaler) error {
	if e.depth+len(e.frames) >= maxValueDepth {
		return e.addJSON(key, func(enc zapcore.ObjectEncoder) error { return enc.AddObject(key, m) })
	}
	hold := e.holds(e.depth + len(e.frames))
	depth := len(e.frames)
	e.OpenNamespace(key)
	err := m.MarshalLogObject(e)
	if hold {
		e.closeFrames(depth + 1) // namespaces the object opened
		e.frames = e.frames[:depth]
		kvs := otlpwire.Dedup(e.kvs)
		slices.SortStableFunc(kvs, ByKey) // as attribute.MapValue sorts
		e.kvs = kvs
		e.held = heldValue{kind: heldMap, key: validKey(key), n: len(kvs)}
		return err
	}
	e.closeFrames(depth)
	return err
}

// ByKey orders attributes by key, as attribute.MapValue sorts them.
func ByKey(a, b attribute.KeyValue) int { return cmp.Compare(a.Key, b.Key) }

func (e *Encoder) AddBinary(key string, v []byte)         { e.add(key, attribute.ByteSliceValue(v)) }
func (e *Encoder) AddByteString(key string, v []byte)     { e.addString(key, string(v)) }
func (e *Encoder) AddBool(key string, v bool)             { e.add(key, attribute.BoolValue(v)) }
func (e *Encoder) AddComplex128(key string, v complex128) { e.add(key, complexValue(v, 128)) }
func (e *Encoder) AddComplex64(key string, v complex64) {
	e.add(key, complexValue(complex128(v), 64))
}
func (e *Encoder) AddDuration(key string, v time.Duration) { e.add(key, durationValue(v)) }
func (e *Encoder) AddFloat64(key string, v float64)        { e.add(key, attribute.Float64Value(v)) }
func (e *Encoder) AddFloat32(key string, v float32)        { e.add(key, float32Value(v)) }
func (e *Encoder) AddInt(key string, v int)                { e.AddInt64(key, int64(v)) }
func (e *Encoder) AddInt64(key string, v int64)            { e.add(key, attribute.Int64Value(v)) }
func (e *Encoder) AddInt32(key string, v int32)            { e.AddInt64(key, int64(v)) }
func (e *Encoder) AddInt16(key string, v int16)            { e.AddInt64(key, int64(v)) }
func (e *Encoder) AddInt8(key string, v int8)              { e.AddInt64(key, int64(v)) }
func (e *Encoder) AddString(key, v string)                 { e.addString(key, v) }
func (e *Encoder) AddTime(key string, v time.Time)         { e.add(key, timeValue(v)) }
func (e *Encoder) AddUint(key string, v uint)              { e.AddUint64(key, uint64(v)) }
func (e *Encoder) AddUint64(key string, v uint64)          { e.add(key, uintValue(v)) }
func (e *Encoder) AddUint32(key string, v uint32)          { e.AddUint64(key, uint64(v)) }
func (e *Encoder) AddUint16(key string, v uint16)          { e.AddUint64(key, uint64(v)) }
func (e *Encoder) AddUint8(key string, v uint8)            { e.AddUint64(key, uint64(v)) }
func (e *Encoder) AddUintptr(key string, v uintptr)        { e.AddUint64(key, uint64(v)) }

// AddReflected adds v as the structure encoding/json gives it, the same
// structure zap's JSON encoder prints.
//
// Where something in v was left out (see reflectedValue), what is left is
// added and the error returned, which zap adds as "<key>Error"; when v
// itself was, only the error.
func (e *Encoder) AddReflected(key string, v any) error {
	val, err := reflectedValue(v, e.Entry.Redact)
	if err == nil || val.Type() != attribute.EMPTY {
		e.add(key, val)
	}
	return err
}

// OpenNamespace nests every later attribute under key, until the entry, or
// the object marshaler that opened it, ends.
func (e *Encoder) OpenNamespace(key string) {
	e.frames = append(e.frames, frame{key: key, start: len(e.kvs)})
}

// arrayEncoder collects an array marshaler's elements. It is pooled: the
// elements are copied into the slice value the array becomes.
type arrayEncoder struct {
	vals   []attribute.Value
	depth  int                // how deep in a value the elements lie
	redact *otlpwire.Redactor // as the Encoder's Entry.Redact
}

var arrayEncoderPool = sync.Pool{New: func() any { return &arrayEncoder{vals: make([]attribute.Value, 0, 16)} }}

func getArrayEncoder(depth int, redact *otlpwire.Redactor) *arrayEncoder {
	a := arrayEncoderPool.Get().(*arrayEncoder)
	a.depth, a.redact = depth, redact
	return a
}

func putArrayEncoder(a *arrayEncoder) {
	clear(a.vals)
	if cap(a.vals) > maxPooledAttrs {
		return
	}
	a.vals = a.vals[:0]
	arrayEncoderPool.Put(a)
}

func (a *arrayEncoder) AppendArray(m zapcore.ArrayMarshaler) error {
	if a.depth >= maxValueDepth {
		return a.appendJSON(func(enc zapcore.ObjectEncoder) error { return enc.AddArray("v", m) })
	}
	inner := getArrayEncoder(a.depth+1, a.redact)
	defer putArrayEncoder(inner)
	err := m.MarshalLogArray(inner)
	a.vals = append(a.vals, attribute.SliceValue(inner.vals...))
	return err
}

func (a *arrayEncoder) AppendObject(m zapcore.ObjectMarshaler) error {
	if a.depth >= maxValueDepth {
		return a.appendJSON(func(enc zapcore.ObjectEncoder) error { return enc.AddObject("v", m) })
	}
	inner := GetEncoder()
	defer PutEncoder(inner)
	inner.depth, inner.Entry.Redact = a.depth+1, a.redact
	err := m.MarshalLogObject(inner)
	a.vals = append(a.vals, attribute.MapValue(inner.result()...))
	return err
}

// Past maxValueDepth, what is left of an object or array is kept as its
// JSON text, as a Reflect value is: nothing is lost, and no backend or SDK
// depth limit cuts it silently (the SDK's empties a value past 64 levels).

// addJSON adds, under key, the JSON text of what add writes under key.
func (e *Encoder) addJSON(key string, add func(zapcore.ObjectEncoder) error) error {
	s, err := jsonText(add, e.Entry.Redact)
	e.addString(key, s)
	return err
}

func (a *arrayEncoder) appendJSON(add func(zapcore.ObjectEncoder) error) error {
	s, err := jsonText(add, a.redact)
	a.vals = append(a.vals, StringValue(s))
	return err
}

// jsonText runs add on a map encoder and returns the JSON of the one value
// it added, with what r matches redacted: as text, no key is left for the
// provider's encoder to see.
func jsonText(add func(zapcore.ObjectEncoder) error, r *otlpwire.Redactor) (string, error) {
	enc := zapcore.NewMapObjectEncoder()
	err := add(enc)
	for _, v := range enc.Fields {
		b, jerr := json.Marshal(v)
		if jerr != nil {
			return "", jerr
		}
		return string(redactJSON(r, b)), err
	}
	return "", err
}

func (a *arrayEncoder) AppendReflected(v any) error {
	val, err := reflectedValue(v, a.redact)
	if err == nil || val.Type() != attribute.EMPTY {
		a.vals = append(a.vals, val)
	}
	return err
}

func (a *arrayEncoder) append(v attribute.Value) { a.vals = append(a.vals, v) }

func (a *arrayEncoder) AppendBool(v bool)             { a.append(attribute.BoolValue(v)) }
func (a *arrayEncoder) AppendByteString(v []byte)     { a.append(StringValue(string(v))) }
func (a *arrayEncoder) AppendComplex128(v complex128) { a.append(complexValue(v, 128)) }
func (a *arrayEncoder) AppendComplex64(v complex64)   { a.append(complexValue(complex128(v), 64)) }
func (a *arrayEncoder) AppendFloat64(v float64)       { a.append(attribute.Float64Value(v)) }
func (a *arrayEncoder) AppendFloat32(v float32)       { a.append(float32Value(v)) }
func (a *arrayEncoder) AppendInt(v int)               { a.AppendInt64(int64(v)) }
func (a *arrayEncoder) AppendInt64(v int64)           { a.append(attribute.Int64Value(v)) }
func (a *arrayEncoder) AppendInt32(v int32)           { a.AppendInt64(int64(v)) }
func (a *arrayEncoder) AppendInt16(v int16)           { a.AppendInt64(int64(v)) }
func (a *arrayEncoder) AppendInt8(v int8)             { a.AppendInt64(int64(v)) }
func (a *arrayEncoder) AppendString(v string)         { a.append(StringValue(v)) }
func (a *arrayEncoder) AppendUint(v uint)             { a.AppendUint64(uint64(v)) }
func (a *arrayEncoder) AppendUint64(v uint64)         { a.append(uintValue(v)) }
func (a *arrayEncoder) AppendUint32(v uint32)         { a.AppendUint64(uint64(v)) }
func (a *arrayEncoder) AppendUint16(v uint16)         { a.AppendUint64(uint64(v)) }
func (a *arrayEncoder) AppendUint8(v uint8)           { a.AppendUint64(uint64(v)) }
func (a *arrayEncoder) AppendUintptr(v uintptr)       { a.AppendUint64(uint64(v)) }
func (a *arrayEncoder) AppendDuration(v time.Duration) {
	a.append(durationValue(v))
}
func (a *arrayEncoder) AppendTime(v time.Time) { a.append(timeValue(v)) }

// Value conversions shared by objects and arrays. OTel has no unsigned,
// complex, duration or time values; each maps to the closest lossless one.

// uintValue keeps a uint64 above MaxInt64 exact, as a decimal string,
// rather than wrapping it negative or rounding it to a float.
func uintValue(v uint64) attribute.Value {
	if v > math.MaxInt64 {
		return StringValue(strconv.FormatUint(v, 10))
	}
	return attribute.Int64Value(int64(v))
}

// float32Value goes through the shortest decimal so that 0.1 stays 0.1, not
// 0.10000000149011612.
func float32Value(v float32) attribute.Value {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	return attribute.Float64Value(f)
}

func complexValue(v complex128, bits int) attribute.Value {
	return StringValue(strconv.FormatComplex(v, 'g', -1, bits))
}

// durationValue is in nanoseconds, exact and easy to aggregate.
func durationValue(v time.Duration) attribute.Value { return attribute.Int64Value(int64(v)) }

// timeValue is RFC 3339 with nanoseconds and the zone offset: exact and
// readable.
func timeValue(v time.Time) attribute.Value {
	return StringValue(v.Format(time.RFC3339Nano))
}
