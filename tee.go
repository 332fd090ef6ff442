package zaplens

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// NewTee returns a core that writes every entry to base as base would have
// written it alone, with the fields made by [Context] (or a context passed as
// zap.Any) taken out and the trace and span ids put in, and that also sends
// the entry to OpenTelemetry when the bridge's own filters let it through.
// base keeps its own level: it gets the entries the bridge filters out too.
func NewTee(base zapcore.Core, opts ...Option) zapcore.Core {
	if base == nil {
		base = zapcore.NewNopCore()
	}
	bridge := NewCore(opts...)
	return &tee{base: base, plain: isPlainCore(base), bridge: bridge, format: bridge.b.cfg.idFormat}
}

// WrapCore returns a zap option that tees a logger's core with the bridge,
// as [NewTee] does:
//
//	logger = logger.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))
func WrapCore(opts ...Option) zap.Option {
	return zap.WrapCore(func(c zapcore.Core) zapcore.Core { return NewTee(c, opts...) })
}

type tee struct {
	base   zapcore.Core
	plain  bool // base is zapcore.NewCore's: its Check is its level, nothing more
	bridge *Core
	format IDFormat        // nil: no ids
	ids    []zapcore.Field // the ids of the With context (bridge.ctx), rendered once
}

func (t *tee) Enabled(l zapcore.Level) bool {
	return t.base.Enabled(l) || t.bridge.Enabled(l)
}

// Level lets zapcore.LevelOf see the least level either side wants.
func (t *tee) Level() zapcore.Level {
	return min(zapcore.LevelOf(t.base), t.bridge.Level())
}

// With keeps a context to itself: base gets it with each entry (see
// baseFields), so a per-request logger.With(zaplens.Context(ctx)) costs base
// nothing.
func (t *tee) With(fields []zapcore.Field) zapcore.Core {
	nt := *t
	ec := readEntry(fields)
	if ec.n < len(fields) {
		bf := fields
		if ec.n > 0 {
			bf = appendNonContexts(make([]zapcore.Field, 0, len(fields)-ec.n), fields)
		}
		nt.base = t.base.With(bf)
		nt.plain = isPlainCore(nt.base)
	}
	nt.bridge = t.bridge.withContext(fields, ec)
	if ec.n > 0 {
		nt.ids = t.appendIDs(nil, ec.sc)
	}
	return &nt
}

// Check asks base and the bridge apart. Base's own Check keeps its
// semantics (sampling, its level); the tee then writes base's entry itself,
// so that it can take the context out and put the ids in.
func (t *tee) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	var base *zapcore.CheckedEntry
	plainBase := t.plain && t.base.Enabled(ent.Level)
	if !t.plain {
		base = t.base.Check(ent, nil)
	}
	s, held := t.bridge.b.route(ent.Level, ent.LoggerName)
	terminal := ent.Level >= zapcore.DPanicLevel
	if base == nil && !plainBase && !s.bridged && !terminal {
		return ce
	}
	w := writerPool.Get().(*teeWrite)
	w.tee, w.base, w.plainBase, w.scope, w.held = t, base, plainBase, s, held
	ce = ce.AddCore(ent, w)
	if terminal {
		// zap may panic or exit after this entry: what is queued, from
		// any logger, must leave first, whether this one is bridged or not.
		w.ce = ce
	}
	return ce
}

// Write writes to both sides, for callers that skip Check.
func (t *tee) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	r := readEntry(fields)
	var buf []zapcore.Field
	err := t.base.Write(ent, t.baseFields(&r, fields, &buf))
	e := getEntry()
	defer putEntry(e)
	s, held := t.bridge.b.route(ent.Level, ent.LoggerName)
	t.bridge.write(e, s, held, &r, &ent, fields)
	return err
}

func (t *tee) Sync() error {
	return errors.Join(t.base.Sync(), t.bridge.Sync())
}

// baseFields returns what base gets: the ids of the entry's context, or
// else of the With context, first, so that no namespace among the fields
// swallows them; the fields less their contexts; and that context once more
// as a field no encoder prints, for a bridge inside base (a tee wrapped
// twice, or another bridge) to find. A plain base has no bridge inside and
// prints no Context field, so it gets the fields as they are, after the
// ids. buf is reused.
func (t *tee) baseFields(ec *entryRead, fields []zapcore.Field, buf *[]zapcore.Field) []zapcore.Field {
	if ec.n == 0 && t.bridge.ctx == nil {
		return fields
	}
	out := (*buf)[:0]
	ctx := ec.ctx
	switch {
	case ec.printed: // an outer tee printed them
	case ec.n > 0:
		out = t.appendIDs(out, ec.sc)
	default:
		ctx = t.bridge.ctx
		out = append(out, t.ids...)
	}
	switch {
	case t.plain && !ec.loud && len(out) == 0:
		return fields
	case t.plain && !ec.loud:
		out = append(out, fields...)
	default:
		out = appendNonContexts(out, fields)
		if ctx != nil {
			out = append(out, passedContext(ctx))
		}
	}
	*buf = out
	return out
}

// appendIDs appends the ids of the span sc in the tee's format; none when
// sc is not valid. A format is user code: if it panics, the line says so in
// place of the ids, as zap does for a panicking Stringer, and is written all
// the same.
func (t *tee) appendIDs(dst []zapcore.Field, sc trace.SpanContext) (out []zapcore.Field) {
	if t.format == nil || !sc.IsValid() {
		return dst
	}
	if k, ok := t.format.(*keyedIDs); ok {
		return k.AppendIDs(dst, sc) // ours: no user code to guard
	}
	defer func() {
		if r := recover(); r != nil {
			out = append(dst, zap.String(keyIDFormatError, "PANIC="+zapfield.PanicText(r)))
		}
	}()
	return t.format.AppendIDs(dst, sc)
}

// keyIDFormatError holds the panic of an IDFormat in base's output.
const keyIDFormatError = "idFormatError"

// appendNonContexts appends to dst the fields that carry no context.
func appendNonContexts(dst, fields []zapcore.Field) []zapcore.Field {
	for _, f := range fields {
		if _, ok := contextOf(f); !ok {
			dst = append(dst, f)
		}
	}
	return dst
}

// teeWrite is what a tee adds to a CheckedEntry: one entry's decisions, so
// that Write does not make them again, and its scratch space. It is pooled;
// zap calls Write once.
type teeWrite struct {
	tee       *tee
	base      *zapcore.CheckedEntry // base's own checked entry, nil if base skips it
	plainBase bool                  // base is plain and takes the entry: written with no checked entry
	scope     *scope                // where the bridge emits, shared: not bridged if it takes no part
	held      bool                  // the bridge holds the entry in its trace (WithHold)
	read      entryRead             // what the entry's fields say, read once at the top of Write
	ce        *zapcore.CheckedEntry // set for DPanic and above: flushed after
	fields    []zapcore.Field       // scratch for base's fields
	entry     entryState            // scratch for the bridge's conversion
}

var writerPool = sync.Pool{New: func() any { return &teeWrite{entry: entryState{enc: zapfield.NewEncoder()}} }}

// baseErrorOutput is where base's write errors go: zap's default error
// output, since a core cannot see its logger's.
var baseErrorOutput = zapcore.Lock(os.Stderr)

func (w *teeWrite) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	t, r := w.tee, &w.read
	r.read(fields)
	if w.base != nil {
		// zap adds the caller and the stack to the entry after Check.
		w.base.Entry = ent
		w.base.ErrorOutput = baseErrorOutput
		w.base.Write(t.baseFields(r, fields, &w.fields)...)
	}
	if w.plainBase {
		writePlain(t.base, ent, t.baseFields(r, fields, &w.fields))
	}
	if w.scope.bridged {
		t.bridge.write(&w.entry, w.scope, w.held, r, &ent, fields)
	}
	if w.ce != nil {
		t.bridge.b.flushTerminal(ent.Level, w.ce)
	}
	w.release()
	return nil
}

const maxPooledFields = 64

func (w *teeWrite) release() {
	clear(w.fields)
	if cap(w.fields) > maxPooledFields {
		w.fields = nil
	}
	// The encoder is the bridge's alone: left as it was found when the
	// bridge took no part.
	if w.scope.bridged && !w.entry.release() {
		return
	}
	w.tee, w.base, w.plainBase, w.scope, w.held, w.read, w.ce, w.fields = nil, nil, false, nil, false, entryRead{}, nil, w.fields[:0]
	writerPool.Put(w)
}

// The rest of zapcore.Core, which zap never calls on a checked entry's core.
func (w *teeWrite) Enabled(zapcore.Level) bool        { return true }
func (w *teeWrite) With([]zapcore.Field) zapcore.Core { return w }
func (w *teeWrite) Sync() error                       { return nil }
func (w *teeWrite) Check(_ zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce
}

// A plain core, zapcore.NewCore's, is written without a checked entry of
// its own: its Check is its level and nothing more, so the pooled checked
// entry zap would take and give back for it is work for nothing.
var plainCoreType = reflect.TypeOf(zapcore.NewCore(zapcore.NewJSONEncoder(zapcore.EncoderConfig{}), zapcore.AddSync(io.Discard), zapcore.InfoLevel))

func isPlainCore(c zapcore.Core) bool { return reflect.TypeOf(c) == plainCoreType }

// writePlain writes to a plain core as its checked entry would have, write
// errors told the same way.
func writePlain(base zapcore.Core, ent zapcore.Entry, fields []zapcore.Field) {
	if err := base.Write(ent, fields); err != nil {
		fmt.Fprintf(baseErrorOutput, "%v write error: %v\n", ent.Time, err)
		_ = baseErrorOutput.Sync()
	}
}
