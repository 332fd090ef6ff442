package zapfield

import (
	"context"

	"go.uber.org/zap/zapcore"
)

// ContextOf reports whether f carries a context: one made by the root's
// Context, or, for users of the official bridge, zap.Any(key, ctx), which
// zap turns into a Stringer field (or a Reflect field for a context that
// is no Stringer). Such a field is the entry's, never an attribute.
func ContextOf(f *zapcore.Field) (context.Context, bool) {
	switch f.Type {
	case zapcore.SkipType, zapcore.StringerType, zapcore.ReflectType:
		ctx, ok := f.Interface.(context.Context)
		return ctx, ok && ctx != nil
	}
	return nil, false
}

// EventNameMark tells the root's EventName field from a string field of
// the same key: zap's encoders never read a string field's Interface.
type EventNameMark struct{}

// IsEventName reports whether f was made by the root's EventName: the
// record's event name, never an attribute.
func IsEventName(f *zapcore.Field) bool {
	if f.Type != zapcore.StringType || f.Interface == nil {
		return false
	}
	_, ok := f.Interface.(EventNameMark)
	return ok
}
