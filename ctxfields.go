package zaplens

import (
	"context"
	"encoding/hex"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// contextKey is the key of the field Context makes. Encoders never see it:
// the field's type is zapcore.SkipType.
const contextKey = "zaplens.context"

// Context carries ctx to the bridge, which takes the trace and span of the
// entry from it. Every other core skips the field, so it prints nothing;
// a tee built by [NewTee] or [WrapCore] prints the ids instead.
//
// A context set with logger.With applies to every later entry of that
// logger; one passed with the entry wins over it.
func Context(ctx context.Context) zap.Field {
	return zap.Field{Key: contextKey, Type: zapcore.SkipType, Interface: ctx}
}

// contextOf reports whether f carries a context: one made by Context, or,
// for users of the official bridge, zap.Any(key, ctx), which zap turns into
// a Stringer field (or a Reflect field for a context that is no Stringer).
func contextOf(f zapcore.Field) (context.Context, bool) {
	switch f.Type {
	case zapcore.SkipType, zapcore.StringerType, zapcore.ReflectType:
		ctx, ok := f.Interface.(context.Context)
		return ctx, ok && ctx != nil
	}
	return nil, false
}

// findContext returns the last context among fields, nil if reading its
// span panics, and how many fields carry one.
func findContext(fields []zapcore.Field) (ctx context.Context, n int) {
	for _, f := range fields {
		if c, ok := contextOf(f); ok {
			ctx, n = c, n+1
		}
	}
	if n > 0 {
		ctx = usableContext(ctx)
	}
	return ctx, n
}

// usableContext returns ctx, or nil if reading its span panics: a nil
// *gin.Context passed as zap.Any, say, must not take the entry with it.
func usableContext(ctx context.Context) (usable context.Context) {
	defer func() {
		if recover() != nil {
			usable = nil
		}
	}()
	trace.SpanContextFromContext(ctx)
	return ctx
}

// traceKeys are the keys under which a tee prints the ids; an empty key
// leaves that id out.
type traceKeys struct {
	trace, span string
	last        *atomic.Pointer[renderedIDs] // shared by a tee and its With copies
}

// renderedIDs is one span's ids as lowercase hex, trace then span. A rank
// logs thousands of lines inside one span, so the last one rendered is kept
// and those lines cost no allocation.
type renderedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
	hex   string
}

func newTraceKeys(traceKey, spanKey string) traceKeys {
	return traceKeys{trace: traceKey, span: spanKey, last: new(atomic.Pointer[renderedIDs])}
}

func (k traceKeys) off() bool { return k.trace == "" && k.span == "" }

// fields appends the ids of ctx's span as string fields; none when ctx
// carries no valid span.
func (k traceKeys) fields(ctx context.Context, dst []zapcore.Field) []zapcore.Field {
	if ctx == nil || k.off() {
		return dst
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return dst
	}
	ids := k.render(sc)
	if k.trace != "" {
		dst = append(dst, zap.String(k.trace, ids.hex[:32]))
	}
	if k.span != "" {
		dst = append(dst, zap.String(k.span, ids.hex[32:]))
	}
	return dst
}

func (k traceKeys) render(sc trace.SpanContext) *renderedIDs {
	tid, sid := sc.TraceID(), sc.SpanID()
	if r := k.last.Load(); r != nil && r.trace == tid && r.span == sid {
		return r
	}
	var buf [2*len(trace.TraceID{}) + 2*len(trace.SpanID{})]byte
	hex.Encode(buf[:32], tid[:])
	hex.Encode(buf[32:], sid[:])
	r := &renderedIDs{trace: tid, span: sid, hex: string(buf[:])}
	k.last.Store(r)
	return r
}
