package zapfield

import (
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// On a zaplens provider an entry becomes OTLP bytes in one of two ways.
// The direct way writes each zap field straight to the record, as zap's
// JSON encoder writes it to a line: no attribute, no slice, no pass to
// make keys unique. It writes strings, numbers, booleans, durations,
// times, binaries, Stringers and errors itself, each field read by the
// walk the general way reads it with (Walk), and keeps what
// a Stringer's or an error's user code gave, so that it need not run
// again. Any other field (a
// marshaler, a reflected value, a float32, a complex) it converts the general way
// (encoder.go), once, and writes the attributes that gives. An entry the
// direct way cannot take (a namespace or an inline marshaler, a repeated
// key, more attributes than the limit, a record too large for a request)
// is written the general way instead: converted to attributes, made
// unique, then encoded, reusing what the direct way had kept or
// converted, so that no user code runs twice. Both write the same bytes:
// encoder_test.go holds both to one table of every field kind,
// ways_test.go holds them to each other beside their leaves, the bridge's
// wire_test.go through its With, its context and its features, and its
// differential tests to the SDK.

// MaxDirectKeys is the most keys the direct way writes; an entry with
// more goes the general way. It bounds the direct way's search for
// repeated keys, which compares every pair whose keyBit is the same.
const MaxDirectKeys = 32

// keyBit is a key's bit in a keySet: keys whose bits differ differ, so a
// new key whose bit is not yet set needs no search among the others.
func keyBit(k string) uint64 {
	return 1 << ((uint(len(k))*7 + uint(k[0]) + uint(k[len(k)-1])*3) & 63)
}

// wireWith is what a With's fields are to the direct way: their
// attributes already encoded, and their keys.
type wireWith struct {
	general bool // the direct way cannot start from these: every entry goes the general way
	buf     []byte
	keys    []string
	bits    uint64 // the keys' keyBits
}

// Direct reports whether the direct way can start from w: false when its
// fields hold what the direct way leaves to the general one.
func (w *With) Direct() bool { return !w.wire.general }

// encodeWith encodes w's attributes for the direct way, under lim, when
// there is a direct way (lim is not nil) and they hold nothing the direct
// way leaves to the general one.
func encodeWith(w *With, lim *otlpwire.Limits) wireWith {
	if lim == nil || len(w.frames) > 0 || len(w.top) > 0 || w.err != nil || len(w.kvs) > MaxDirectKeys {
		return wireWith{general: true}
	}
	var ww wireWith
	for _, kv := range w.kvs {
		if kv.Key == "" {
			continue // left out, as AppendRecord leaves it
		}
		if slices.Contains(ww.keys, string(kv.Key)) {
			return wireWith{general: true}
		}
		ww.keys = append(ww.keys, string(kv.Key))
		ww.bits |= keyBit(string(kv.Key))
		ww.buf = otlpwire.AppendAttr(ww.buf, kv, *lim)
	}
	return ww
}

// AppendDirect appends to b the entry's record, whose head (all but its
// attributes) is rec, the direct way: w's encoded attributes, then each
// field's, the exception's, the caller and stack, and Entry.Added. It
// reports false when the entry needs the general way (Attributes, on the
// same Encoder, before Release): then e keeps what it converted, so that
// no user code runs again, and b holds no record.
func (e *Encoder) AppendDirect(b []byte, w *With, rec *otlpwire.Record, ent *zapcore.Entry, fields []zapcore.Field, lim otlpwire.Limits) ([]byte, bool) {
	if w.wire.general {
		return b, false
	}
	d := &e.direct
	d.keys, d.lim, d.e = d.keys[:0], lim, e
	defer d.done()
	d.b = otlpwire.AppendHead(b, rec, &d.lim)
	d.b = append(d.b, w.wire.buf...)
	d.with, d.bits = w.wire.keys, w.wire.bits
	ok := d.addFields(fields) && d.addException() && d.addEntry(ent) && d.addAttrs(e.Entry.Added)
	if !ok || (lim.AttributeCount >= 0 && len(d.with)+len(d.keys) > lim.AttributeCount) {
		return d.b, false
	}
	return otlpwire.AppendTail(d.b, rec, 0), true
}

// directWriter is one entry on its way: the record so far and the keys in
// it. It lives in an Encoder, for its room, and e is that encoder,
// scratch for the fields it converts the general way.
type directWriter struct {
	b    []byte
	with []string // the keys of the core's With fields, already in b
	keys []string // the keys of the entry's own fields so far
	bits uint64   // the keyBits of with and keys
	lim  otlpwire.Limits
	e    *Encoder
	// scratch is room for a value formatted before it is written: a
	// time, a large unsigned number.
	scratch []byte

	// What the fields it converted became, kept until the entry is
	// written, either way: conv holds their attributes, converted says
	// whose they are, and exception is the last zap.Error's, which goes
	// after every field, as the general way puts it.
	conv      []attribute.KeyValue
	converted []convertedField
	exception lastException
}

// A convertedField is the general conversion of fields[index]: its
// attributes are conv[start:end], the first held.n of them a held object
// or array's entries.
type convertedField struct {
	index, start, end int
	held              heldValue
}

// lastException is the exception of the last zap.Error read, of
// fields[index]: only the last counts, as setException replaces any
// earlier one.
type lastException struct {
	set   bool
	index int
	err   error
	attrs []attribute.KeyValue
}

// done forgets the entry's bytes and keys, keeping the room and what was
// converted.
func (d *directWriter) done() {
	clear(d.keys)
	d.b, d.keys, d.with = nil, d.keys[:0], nil
}

// forget drops what was converted: the entry is written.
func (d *directWriter) forget() {
	if len(d.converted) == 0 {
		return
	}
	clear(d.conv)
	clear(d.converted)
	clear(d.exception.attrs)
	if cap(d.conv) > maxPooledAttrs || cap(d.converted) > maxPooledAttrs {
		d.conv, d.converted = nil, nil
	}
	d.conv, d.converted = d.conv[:0], d.converted[:0]
	d.exception = lastException{attrs: d.exception.attrs[:0]}
}

// key takes a field's key, made valid, and reports whether it may be
// written: false for a key already in the record. An empty key is taken
// and written nowhere, as AppendRecord leaves it out.
func (d *directWriter) key(k string) (string, bool) {
	k = validString(k)
	if k == "" {
		return k, true
	}
	if len(d.with)+len(d.keys) >= MaxDirectKeys {
		return k, false
	}
	bit := keyBit(k)
	if d.bits&bit != 0 && (slices.Contains(d.with, k) || slices.Contains(d.keys, k)) {
		return k, false
	}
	d.bits |= bit
	d.keys = append(d.keys, k)
	return k, true
}

// addFields writes the fields, as Encoder.addFields converts them.
func (d *directWriter) addFields(fields []zapcore.Field) bool {
	return Walk(wireLeaves{d}, fields)
}

// wireLeaves are the direct way's Leaves: each value is written
// to the record. What a Stringer's or an error's user code gave is kept,
// should the entry go the general way after all; a field whose conversion
// runs zap's Field.AddTo is converted the general way, once, and what that
// gives written; a field that nests what follows is declined.
type wireLeaves struct{ d *directWriter }

func (l wireLeaves) String(key, v string) bool {
	d := l.d
	k, ok := d.key(key)
	if ok && k != "" {
		d.b = otlpwire.AppendStringAttr(d.b, k, validString(v), &d.lim)
	}
	return ok
}

// formatted writes text formatted into d.scratch, whose room it keeps.
func (d *directWriter) formatted(key string, v []byte) bool {
	d.scratch = v[:0]
	return wireLeaves{d}.ByteString(key, v)
}

// ByteString writes bytes read as text.
func (l wireLeaves) ByteString(key string, v []byte) bool {
	k, ok := l.d.key(key)
	if ok && k != "" {
		l.d.b = otlpwire.AppendTextAttr(l.d.b, k, v, &l.d.lim)
	}
	return ok
}

func (l wireLeaves) Int(key string, v int64) bool {
	k, ok := l.d.key(key)
	if ok && k != "" {
		l.d.b = otlpwire.AppendIntAttr(l.d.b, k, v, &l.d.lim)
	}
	return ok
}

func (l wireLeaves) Float(key string, v float64) bool {
	k, ok := l.d.key(key)
	if ok && k != "" {
		l.d.b = otlpwire.AppendFloatAttr(l.d.b, k, v, &l.d.lim)
	}
	return ok
}

func (l wireLeaves) Bool(k string, v bool) bool {
	k, ok := l.d.key(k)
	if ok && k != "" {
		l.d.b = otlpwire.AppendBoolAttr(l.d.b, k, v, &l.d.lim)
	}
	return ok
}

// Uint writes a value above MaxInt64 as a decimal string, as uintValue
// makes it.
func (l wireLeaves) Uint(k string, v uint64) bool {
	return l.d.formatted(k, strconv.AppendUint(l.d.scratch[:0], v, 10))
}

func (l wireLeaves) Binary(k string, v []byte) bool {
	k, ok := l.d.key(k)
	if ok && k != "" {
		l.d.b = otlpwire.AppendBytesAttr(l.d.b, k, v, &l.d.lim)
	}
	return ok
}

func (l wireLeaves) Time(k string, v time.Time) bool {
	return l.d.formatted(k, v.AppendFormat(l.d.scratch[:0], time.RFC3339Nano))
}

func (l wireLeaves) Stringer(i int, k, v string) bool {
	d := l.d
	kv := d.keep(i, heldValue{}, StringAttr(k, v))[0]
	return l.String(string(kv.Key), kv.Value.AsString())
}

// Value converts an attribute.Value, kept as itself, the general way.
func (l wireLeaves) Value(i int, f *zapcore.Field, v attribute.Value) bool {
	l.d.general().Value(i, f, v)
	return l.d.writeConverted(i)
}

// Error writes an error field as addError converts it: under the key
// "error" an exception, written after every field; under another key, the
// message; then its details.
func (l wireLeaves) Error(i int, key string, err error) bool {
	d := l.d
	r := ReadError(key, err)
	if r.Exception {
		d.keep(i, heldValue{})
		x := &d.exception
		clear(x.attrs)
		x.set, x.index, x.err = true, i, err
		x.attrs = r.AppendException(x.attrs[:0])
		return true
	}
	d.keep(i, heldValue{}, StringAttr(r.Key, r.Msg))
	d.conv = r.AppendDetails(d.conv)
	kvs := d.extend()
	return l.String(string(kvs[0].Key), kvs[0].Value.AsString()) && d.addAttrs(kvs[1:])
}

// Marshaled converts the field the general way: zap's Field.AddTo, once.
func (l wireLeaves) Marshaled(i int, f *zapcore.Field) bool {
	l.d.general().Marshaled(i, f)
	return l.d.writeConverted(i)
}

// Nested declines the entry: what follows a namespace nests, which the
// direct way does not write.
func (l wireLeaves) Nested(int, *zapcore.Field) bool { return false }

// keep keeps what fields[i] became, for the general way: kvs, the first
// h.n of them a held object's or array's entries. It returns them as kept.
func (d *directWriter) keep(i int, h heldValue, kvs ...attribute.KeyValue) []attribute.KeyValue {
	c := convertedField{index: i, start: len(d.conv), held: h}
	d.conv = append(d.conv, kvs...)
	c.end = len(d.conv)
	d.converted = append(d.converted, c)
	return d.conv[c.start:c.end]
}

// extend makes what was appended to conv since the last kept field part
// of what that field became.
func (d *directWriter) extend() []attribute.KeyValue {
	c := &d.converted[len(d.converted)-1]
	c.end = len(d.conv)
	return d.conv[c.start:c.end]
}

// general is d's scratch encoder, ready for a field the general way's
// leaf converts, its object or array held (see heldValue).
func (d *directWriter) general() attrLeaves {
	d.e.hold = true
	return attrLeaves{d.e}
}

// writeConverted writes what the general way's leaf made of fields[i], which
// may have run user code, and keeps it for the general way, should the
// entry go there after all: its attributes.
func (d *directWriter) writeConverted(i int) bool {
	e := d.e
	defer e.reset()
	h := e.held
	kvs := d.keep(i, h, e.kvs...)
	return d.addHeld(h, kvs[:h.n]) && d.addAttrs(kvs[h.n:])
}

// addHeld writes a held object or array, if any, as one attribute.
func (d *directWriter) addHeld(h heldValue, entries []attribute.KeyValue) bool {
	if h.kind == heldNone {
		return true
	}
	k, ok := d.key(string(h.key))
	if !ok || k == "" {
		return ok
	}
	if h.kind == heldMap {
		d.b = otlpwire.AppendMapAttr(d.b, k, entries, d.lim)
	} else {
		d.b = otlpwire.AppendSliceAttr(d.b, k, entries, d.lim)
	}
	return true
}

// addAttrs writes converted attributes.
func (d *directWriter) addAttrs(kvs []attribute.KeyValue) bool {
	for _, kv := range kvs {
		k, ok := d.key(string(kv.Key))
		if !ok {
			return false
		}
		if k != "" {
			d.b = otlpwire.AppendAttr(d.b, kv, d.lim)
		}
	}
	return true
}

// addException writes the last zap.Error's exception, after every field.
func (d *directWriter) addException() bool {
	return d.addAttrs(d.exception.attrs)
}

// addConverted adds a converted field's attributes where the walk would
// have.
func (e *Encoder) addConverted(c convertedField, kvs []attribute.KeyValue) {
	if c.held.kind != heldNone {
		e.kvs = append(e.kvs, c.held.attr(kvs[:c.held.n]))
		kvs = kvs[c.held.n:]
	}
	e.kvs = append(e.kvs, kvs...)
}

// addEntry writes the caller and the stack, as Encoder.addEntry adds
// them: a stack is exception.stacktrace beside an exception, else
// code.stacktrace.
func (d *directWriter) addEntry(ent *zapcore.Entry) bool {
	l := wireLeaves{d}
	if ent.Caller.Defined {
		if !l.String(KeyFilePath, ent.Caller.File) || !l.Int(KeyLineNumber, int64(ent.Caller.Line)) {
			return false
		}
		if ent.Caller.Function != "" && !l.String(KeyFunctionName, ent.Caller.Function) {
			return false
		}
	}
	if ent.Stack == "" {
		return true
	}
	if d.exception.set {
		return l.String(KeyExceptionStack, ent.Stack)
	}
	return l.String(KeyCodeStacktrace, ent.Stack)
}
