package zaplens

import (
	"time"

	"go.opentelemetry.io/otel/log"
	"go.uber.org/zap/zapcore"
)

// DefaultFlushTimeout bounds how long Sync, and a DPanic, Panic or Fatal
// entry, wait for the provider to flush when no [WithFlushTimeout] is given.
const DefaultFlushTimeout = 5 * time.Second

// DefaultScope is the instrumentation scope of entries from an unnamed
// logger when no [WithDefaultScope] is given.
const DefaultScope = "zaplens"

// An Option configures the bridge built by [NewCore], [NewTee] or [WrapCore].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what the options set; it is read-only once a core is built.
type config struct {
	provider     log.LoggerProvider // nil: the global provider, looked up once
	level        zapcore.LevelEnabler
	include      []string
	exclude      []string
	idFormat     IDFormat // nil: a tee writes no ids
	traceBased   traceBased
	flushTimeout time.Duration
	defaultScope string
	levels       []levelFor // WithLevelFor's, in the order given
	baggage      baggageKeys
	spans        spanConfig
}

func newConfig(opts []Option) config {
	c := config{
		level:        zapcore.InfoLevel,
		idFormat:     hexIDs("trace_id", "span_id"),
		flushTimeout: DefaultFlushTimeout,
		defaultScope: DefaultScope,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// WithLoggerProvider sets the provider the bridge emits to. The default is
// the global provider, otel.GetLoggerProvider(), as it is when the core is
// built.
func WithLoggerProvider(p log.LoggerProvider) Option {
	return optionFunc(func(c *config) { c.provider = p })
}

// WithLevel sets the least level the bridge sends; the default is
// zapcore.InfoLevel. It filters only the bridge: the base core of a tee keeps
// its own level.
func WithLevel(l zapcore.LevelEnabler) Option {
	return optionFunc(func(c *config) {
		if l != nil {
			c.level = l
		}
	})
}

// WithLoggerName bridges only the loggers with these names and their
// children: "megatron.training" bridges "megatron.training" and
// "megatron.training.loop", not "megatron.trainingx" nor "megatron". Repeated
// calls add prefixes. Without it, every logger is bridged.
//
// With it, the unnamed root logger is bridged only if "" is among the
// prefixes: WithLoggerName("", "http") bridges the root logger and http.*.
// A prefix that can match no name (a trailing dot, an empty segment, a
// wildcard) is told on stderr once, when the core is built.
func WithLoggerName(prefixes ...string) Option {
	return optionFunc(func(c *config) { c.include = append(c.include, prefixes...) })
}

// WithoutLoggerName keeps the loggers with these names and their children
// out of the bridge. It wins over [WithLoggerName].
func WithoutLoggerName(prefixes ...string) Option {
	return optionFunc(func(c *config) { c.exclude = append(c.exclude, prefixes...) })
}

// WithTraceKeys sets the keys under which a tee adds the trace and span ids,
// in lowercase hex, to its base core's output: the default format under
// other keys; the defaults are "trace_id" and "span_id". An empty key leaves
// that id out. It and [WithIDFormat] set the same thing: the last one given
// wins.
func WithTraceKeys(traceKey, spanKey string) Option {
	return optionFunc(func(c *config) { c.idFormat = hexIDs(traceKey, spanKey) })
}

// WithFlushTimeout bounds how long Sync, and the synchronous flush of a
// DPanic, Panic or Fatal entry, wait for the provider. Zero or less turns
// those flushes off.
func WithFlushTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.flushTimeout = d })
}

// WithDefaultScope sets the instrumentation scope name of entries from an
// unnamed logger; named loggers use their zap name. An empty name keeps
// [DefaultScope]: OTel scopes must have one.
func WithDefaultScope(name string) Option {
	return optionFunc(func(c *config) {
		if name != "" {
			c.defaultScope = name
		}
	})
}

// WithLevelFor sets the least level the bridge sends for the loggers named
// prefix and its children, on "." boundaries as [WithLoggerName] matches
// them: WithLevelFor("http", zapcore.WarnLevel) takes "http" and
// "http.client", not "httpx". The longest prefix that matches a name wins
// over shorter ones and over [WithLevel], which keeps every other logger;
// for one prefix given twice, the last wins. It is decided once per logger
// name, like the name filters. "" is the unnamed root logger alone.
//
// The bridge's Level is then the least level any of them allows, so that
// zap hands it every entry some logger wants; its Check decides by name.
// Like WithLevel, it filters only the bridge: a tee's base keeps its level.
func WithLevelFor(prefix string, level zapcore.LevelEnabler) Option {
	return optionFunc(func(c *config) {
		if level != nil {
			c.levels = append(c.levels, levelFor{prefix: prefix, level: level})
		}
	})
}

// WithBaggage adds the W3C baggage members of the entry's context named by
// keys to the record as string attributes, each under its member's key, as
// contrib's baggagecopy log processor does; with no keys, every member, in
// the order of their keys. Repeated calls add keys. The baggage is read
// from the context the trace ids come from ([Context], or With's), once
// per entry, and added after the entry's own attributes: a member named
// like a field replaces the field's value, as the SDK's record does. It
// adds to the bridge only: a tee's base prints no baggage.
func WithBaggage(keys ...string) Option {
	return optionFunc(func(c *config) { c.baggage.add(keys) })
}

// WithSpanEvents adds every bridged entry at or above level whose context
// holds a recording span to that span as an event: named by the message,
// with the record's attributes, and a zap.Error recorded as the span's
// error (span.RecordError), whose "exception" event then holds the
// exception's message, type and stack rather than the line's event. A trace UI with no log backend then shows the
// lines in the trace. The entry must pass the bridge's own filters; the
// provider's Enabled does not stop the event. Off by default.
func WithSpanEvents(level zapcore.LevelEnabler) Option {
	return optionFunc(func(c *config) { c.spans.setEvents(level) })
}

// WithSpanStatus sets the status of the entry's recording span to Error,
// described by the message, for every bridged entry at or above level. Off
// by default.
func WithSpanStatus(level zapcore.LevelEnabler) Option {
	return optionFunc(func(c *config) { c.spans.setStatus(level) })
}
