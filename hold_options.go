package zaplens

import (
	"time"

	"go.uber.org/zap/zapcore"
)

// EnvHold turns [WithHold] on: its value is the least level held.
const EnvHold = "ZAPLENS_HOLD"

// WithHold holds, per trace, the entries at level or above that the
// bridge's own level leaves out, and ships them only if the trace fails:
// when an entry at the trigger level ([WithHoldTrigger], Error by default)
// is logged in it, or a span of it ends with an error (package
// zaplens/holdspan). They are shipped first, in the order they were
// logged, each with its own time, ids and attributes, as if bridged at
// their level; from then, the trace's entries at level go straight
// through until it ends. Entries without a span are not held. The base
// core of a tee prints what its own level says, held or not.
//
// What is held is bounded ([WithHoldBytes]): the oldest entries of the
// trace touched longest ago go first, counted ([Core.HoldStats]), and the
// first entry shipped for a trace that lost some carries how many
// ([KeyHoldEvicted]). A trace's entries are freed when its local root
// span ends without failing (holdspan), or after [WithHoldIdle]. A crash
// loses what is held: only entries of traces that had not failed.
// docs/hold.md has the defaults and what holding costs.
func WithHold(level zapcore.Level) Option {
	return optionFunc(func(c *config) { c.hold.on, c.hold.level = true, level })
}

// WithHoldTrigger sets the least level whose entry ships its trace's held
// entries; the default is Error.
func WithHoldTrigger(level zapcore.Level) Option {
	return optionFunc(func(c *config) { c.hold.trigger, c.hold.triggerSet = level, true })
}

// WithHoldBytes bounds what is held: total for the bridge, all traces
// together, and perTrace for one; 0 keeps a default
// ([DefaultHoldBytes], [DefaultHoldTraceBytes]).
func WithHoldBytes(total, perTrace int) Option {
	return optionFunc(func(c *config) { c.hold.maxBytes, c.hold.traceBytes = total, perTrace })
}

// WithHoldIdle frees a trace's held entries after d with no entry logged
// in it, for programs without the holdspan processor; 0 keeps
// [DefaultHoldIdle].
func WithHoldIdle(d time.Duration) Option {
	return optionFunc(func(c *config) { c.hold.idle = d })
}

// holdDefaults fills what no option set: the level from ZAPLENS_HOLD, the
// rest from the defaults.
func (h *holdConfig) holdDefaults() {
	if !h.on {
		if l, ok := envLevel(EnvHold); ok {
			h.on, h.level = true, l
		}
	}
	if !h.triggerSet {
		h.trigger = zapcore.ErrorLevel
	}
	if h.maxBytes <= 0 {
		h.maxBytes = DefaultHoldBytes
	}
	if h.traceBytes <= 0 {
		h.traceBytes = DefaultHoldTraceBytes
	}
	if h.traceLines <= 0 {
		h.traceLines = DefaultHoldTraceLines
	}
	if h.idle <= 0 {
		h.idle = DefaultHoldIdle
	}
}
