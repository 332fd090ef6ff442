package zaplens

import (
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zapcore"
)

// WithTraceBased leaves out of the bridge every entry below always whose
// context holds a valid span that is not sampled: the logs of a trace that
// is not kept would point at nothing. Entries without a span, those of
// sampled spans, and every entry at always or above are bridged as usual.
// WithTraceBased([Off]) exempts no level: it is OpenTelemetry's trace_based
// logger setting. It filters only the bridge: the base core of a tee still
// prints every entry, with its ids.
//
// zap hands a core the entry's fields, and so its context, only in Write:
// the decision is made there, before any field is converted, and costs no
// allocation.
func WithTraceBased(always zapcore.Level) Option {
	return optionFunc(func(c *config) { c.traceBased = traceBased{on: true, always: always} })
}

// traceBased is the rule WithTraceBased sets; the zero value drops nothing.
type traceBased struct {
	on     bool
	always zapcore.Level
}

// drops reports whether an entry at level l whose span is sc (zero: no
// context) stays out of the bridge.
func (tb *traceBased) drops(l zapcore.Level, sc *trace.SpanContext) bool {
	if !tb.on || (tb.always != Off && l >= tb.always) {
		return false
	}
	return sc.IsValid() && !sc.IsSampled()
}
