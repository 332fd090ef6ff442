package zaplens

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// contextKey is the key of the field Context makes. Encoders never see it:
// the field's type is zapcore.SkipType.
const contextKey = "zaplens.context"

// passedKey marks the context a tee passes on to its base, whose line
// already has the ids: a bridge inside base, however it is wrapped (hooks,
// a sampler, IncreaseLevel), takes the context from it but prints no ids of
// its own, so a line never holds them twice.
const passedKey = "zaplens.context.passed"

// passedContext is the field a tee passes ctx on with.
func passedContext(ctx context.Context) zap.Field {
	return zap.Field{Key: passedKey, Type: zapcore.SkipType, Interface: ctx}
}

// Context carries ctx to the bridge, which takes the trace and span of the
// entry from it. Every other core skips the field, so it prints nothing;
// a tee built by [NewTee] or [WrapCore] prints the ids instead.
//
// A context set with logger.With applies to every later entry of that
// logger; one passed with the entry wins over it.
func Context(ctx context.Context) zap.Field {
	return zap.Field{Key: contextKey, Type: zapcore.SkipType, Interface: ctx}
}

// contextOf reports whether f carries a context (see zapfield.ContextOf).
func contextOf(f zapcore.Field) (context.Context, bool) { return zapfield.ContextOf(&f) }

// entryRead is what one pass over an entry's fields finds, for every
// later step to read: the tee's ids and base's fields, the trace-based
// rule, Enabled, the record's head, and which way encodes the fields. None
// of them looks at the fields for these again, nor reads the span twice.
type entryRead struct {
	ctx     context.Context   // the last context among the fields; nil if none, or if reading its span panics
	sc      trace.SpanContext // ctx's span
	n       int               // how many fields carry a context
	printed bool              // an outer tee printed the ids (see passedKey)
	loud    bool              // a context field an encoder would print: zap.Any's
	nested  bool              // a namespace or an inline marshaler: the direct way declines the entry
	event   string            // the last EventName's name
	events  int               // how many fields are EventName's
}

// readEntry reads the entry's context and event name from its fields.
func readEntry(fields []zapcore.Field) (r entryRead) {
	r.read(fields)
	return r
}

// read fills r, a zero entryRead, from the fields, in one pass.
func (r *entryRead) read(fields []zapcore.Field) {
	for i := range fields {
		f := &fields[i]
		switch f.Type {
		case zapcore.StringType:
			if zapfield.IsEventName(f) {
				r.event, r.events = f.String, r.events+1
			}
		case zapcore.SkipType, zapcore.StringerType, zapcore.ReflectType:
			if c, ok := contextOf(*f); ok {
				r.ctx, r.n = c, r.n+1
				r.printed = r.printed || (f.Key == passedKey && f.Type == zapcore.SkipType)
				r.loud = r.loud || f.Type != zapcore.SkipType
			}
		case zapcore.NamespaceType, zapcore.InlineMarshalerType:
			r.nested = true
		}
	}
	if r.n > 0 {
		r.ctx, r.sc = spanOf(r.ctx)
	}
}

// spanOf returns ctx and its span context, or nothing if reading the span
// panics: a nil *gin.Context passed as zap.Any, say, must not take the
// entry with it.
func spanOf(ctx context.Context) (usable context.Context, sc trace.SpanContext) {
	defer func() {
		if recover() != nil {
			usable, sc = nil, trace.SpanContext{}
		}
	}()
	return ctx, trace.SpanContextFromContext(ctx)
}

// eventNameKey is the key EventName's field prints under in a core that
// is not the bridge: the attribute older conventions put the name in.
const eventNameKey = "event.name"

// EventName sets the entry's event name: the log record's EventName (OTLP
// LogRecord.event_name), not an attribute, and what the provider's Enabled
// is asked with (log.EnabledParameters.EventName), so that a provider can
// filter on it. Every other core, a tee's base among them, prints it as a
// string under "event.name". Set with logger.With, it names every later
// entry of that logger; one passed with the entry wins over it.
func EventName(name string) zap.Field {
	return zap.Field{Key: eventNameKey, Type: zapcore.StringType, String: name, Interface: zapfield.EventNameMark{}}
}
