package zapfield

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// With is what a logger's With fields became, converted once for every
// entry of the logger: their attributes and open namespaces as the general
// way leaves them, their exception, and, when the direct way can start
// from them, the same attributes as OTLP bytes, with their keys. The zero
// With is a logger's with no fields. A With is read, never changed, once
// made: loggers share it.
type With struct {
	kvs    []attribute.KeyValue
	frames []frame
	top    []attribute.KeyValue
	err    error
	wire   wireWith
}

// With converts fields, added after prev's, into a new With, with e, an
// empty Encoder whose Entry.Redact is set. lim is the direct way's
// limits, nil when the logger's provider takes no OTLP bytes: then nothing
// is encoded for it. e is left to Release.
func (e *Encoder) With(prev *With, fields []zapcore.Field, lim *otlpwire.Limits) With {
	e.seed(prev)
	e.addFields(fields)
	w := With{kvs: slices.Clone(e.kvs), frames: slices.Clone(e.frames), top: slices.Clone(e.top), err: e.err}
	w.wire = encodeWith(&w, lim)
	return w
}

// seed makes an empty encoder start where w left off.
func (e *Encoder) seed(w *With) {
	e.kvs = append(e.kvs, w.kvs...)
	e.frames = append(e.frames, w.frames...)
	e.top = append(e.top, w.top...)
	e.hasErr, e.err = len(w.top) > 0 || w.err != nil, w.err
}
