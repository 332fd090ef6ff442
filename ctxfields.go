package zaplens

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
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

// idsPrinted reports whether an outer tee already printed the ids of the
// entry whose fields these are.
func idsPrinted(fields []zapcore.Field) bool {
	for i := range fields {
		if fields[i].Key == passedKey && fields[i].Type == zapcore.SkipType {
			return true
		}
	}
	return false
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
