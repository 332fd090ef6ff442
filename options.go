package zaplens

import (
	"fmt"
	"os"
	"strings"
	"sync"
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
	ctxAttrs     []ctxAttrs // the features that add attributes from the context (ctxattrs.go)
	spans        spanConfig
	hold         holdConfig
}

// newConfig applies opts, then takes from the environment each bridge
// setting no option set, then the defaults.
func newConfig(opts []Option) config {
	c := config{
		idFormat:     unsetIDFormat,
		flushTimeout: DefaultFlushTimeout,
		defaultScope: DefaultScope,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	c.fromEnv()
	return c
}

// The bridge's own variables. Each is read when a core is built, for a
// setting no option set: an option in code wins, as it does over the
// OTEL_* variables of otlplog.NewLoggerProvider. A bad value is told once on
// stderr, naming the variable, and the default holds.
const (
	// EnvLevel is the least level bridged: debug, info, warn, error,
	// dpanic, panic, fatal, or off (nothing bridged); or levels per
	// logger-name prefix as well, "info,http=warn,megatron.training=debug",
	// as [WithLevelFor] sets them. [WithLevel], [WithRankLevel] and
	// WithLevelFor for the same prefix win over it. A bad part is told
	// and ignored; the parts that parse apply.
	EnvLevel = "ZAPLENS_LEVEL"
	// EnvLoggerNames is a comma-separated list of logger-name prefixes to
	// bridge, as [WithLoggerName] takes them; an empty item is the unnamed
	// root logger.
	EnvLoggerNames = "ZAPLENS_LOGGER_NAMES"
	// EnvExcludeLoggerNames is a comma-separated list of logger-name
	// prefixes kept out of the bridge, as [WithoutLoggerName] takes them.
	EnvExcludeLoggerNames = "ZAPLENS_EXCLUDE_LOGGER_NAMES"
	// EnvIDFormat is the form of the ids in a tee's base output: hex (the
	// default), datadog, ecs, gcp (project from GOOGLE_CLOUD_PROJECT),
	// gcp:PROJECT, or none. [WithIDFormat] and [WithTraceKeys] win over it.
	EnvIDFormat = "ZAPLENS_ID_FORMAT"
	// EnvTraceBased turns [WithTraceBased] on: its value is the level from
	// which entries of unsampled spans are bridged all the same, or off to
	// exempt no level.
	EnvTraceBased = "ZAPLENS_TRACE_BASED"
)

// unsetIDFormat marks the ids' format as set by no option: nil is a
// choice, no ids.
var unsetIDFormat IDFormat = &keyedIDs{}

// fromEnv fills each setting no option set from its variable, else its
// default.
func (c *config) fromEnv() {
	spec := envLevelSpec()
	if c.level == nil {
		c.level = zapcore.InfoLevel
		if spec.hasAll {
			c.level = spec.all
		}
	}
	for _, lf := range spec.fors {
		if !c.hasLevelFor(lf.prefix) { // WithLevelFor's own wins
			c.levels = append(c.levels, lf)
		}
	}
	if c.idFormat == unsetIDFormat {
		c.idFormat = hexIDs("trace_id", "span_id")
		if v := strings.TrimSpace(os.Getenv(EnvIDFormat)); v != "" {
			if f, ok := parseIDFormat(v); ok {
				c.idFormat = f
			} else {
				warnEnv(EnvIDFormat, v, "want hex, datadog, ecs, gcp, gcp:PROJECT or none")
			}
		}
	}
	if c.include == nil {
		c.include = envPrefixes(EnvLoggerNames)
	}
	if c.exclude == nil {
		c.exclude = envPrefixes(EnvExcludeLoggerNames)
	}
	if !c.traceBased.on {
		if l, ok := envLevel(EnvTraceBased); ok {
			c.traceBased = traceBased{on: true, always: l}
		}
	}
	c.hold.holdDefaults()
}

// envLevel reads a level variable: one of zap's level names, in any case,
// or off.
func envLevel(key string) (zapcore.Level, bool) {
	v := strings.TrimSpace(os.Getenv(key))
	if v == "" {
		return 0, false
	}
	l, err := parseLevelName(v)
	if err != nil {
		warnEnv(key, v, err.Error())
		return 0, false
	}
	return l, true
}

// envLevelSpec reads ZAPLENS_LEVEL: a level, or a level specification
// with levels per logger-name prefix ("info,http=warn"). A bad part is
// ignored, with a warning, and the parts that parse are kept.
func envLevelSpec() levelSpec {
	v := strings.TrimSpace(os.Getenv(EnvLevel))
	if v == "" {
		return levelSpec{}
	}
	spec, errs := parseLevelSpec(v)
	kept := spec.hasAll || len(spec.fors) > 0
	for _, err := range errs {
		if !kept {
			warnEnv(EnvLevel, v, err.Error())
			continue
		}
		tellOnce(fmt.Sprintf("zaplens: %s=%q: %s; that part ignored, the rest kept\n", EnvLevel, v, err))
	}
	return spec
}

// hasLevelFor tells whether WithLevelFor set prefix's level.
func (c *config) hasLevelFor(prefix string) bool {
	for _, lf := range c.levels {
		if lf.prefix == prefix {
			return true
		}
	}
	return false
}

// parseIDFormat reads ZAPLENS_ID_FORMAT's value.
func parseIDFormat(v string) (IDFormat, bool) {
	name, project, hasProject := strings.Cut(v, ":")
	switch strings.ToLower(name) {
	case "hex":
		return hexIDs("trace_id", "span_id"), !hasProject
	case "datadog":
		return DatadogIDs(), !hasProject
	case "ecs":
		return ECSIDs(), !hasProject
	case "none":
		return nil, !hasProject
	case "gcp":
		if !hasProject {
			return googleIDs(os.Getenv(googleProjectEnv)), true
		}
		return googleIDs(project), project != ""
	}
	return nil, false
}

// envPrefixes reads a comma-separated list of logger-name prefixes; nil
// when the variable is not set. A prefix that can match no name is left
// out, with a warning.
func envPrefixes(key string) []string {
	v := os.Getenv(key)
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var prefixes []string
	for p := range strings.SplitSeq(v, ",") {
		p = strings.TrimSpace(p)
		if why := unmatchable(p); why != "" {
			warnEnv(key, v, fmt.Sprintf("%q can match no zap logger name: %s", p, why))
			continue
		}
		prefixes = append(prefixes, p)
	}
	return prefixes
}

// warnEnv tells, once, that key's value v is ignored, and why.
func warnEnv(key, v, why string) {
	tellOnce(fmt.Sprintf("zaplens: %s=%q: %s; ignored, as if not set\n", key, v, why))
}

// told remembers the lines tellOnce wrote, so that a core built per
// request tells each once.
var told sync.Map // string -> struct{}

// tellOnce writes line on the loss output the first time it is told.
func tellOnce(line string) {
	if _, seen := told.LoadOrStore(line, struct{}{}); !seen {
		fmt.Fprint(lossOutput, line)
	}
}

// WithLoggerProvider sets the provider the bridge emits to. The default is
// the global provider, otel.GetLoggerProvider(), as it is when the core is
// built.
func WithLoggerProvider(p log.LoggerProvider) Option {
	return optionFunc(func(c *config) { c.provider = p })
}

// WithLevel sets the least level the bridge sends; the default is
// zapcore.InfoLevel, or ZAPLENS_LEVEL ([EnvLevel]). It filters only the
// bridge: the base core of a tee keeps its own level.
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
// calls add prefixes. Without it, the prefixes of ZAPLENS_LOGGER_NAMES
// ([EnvLoggerNames]) are used, and without that every logger is bridged.
//
// With it, the unnamed root logger is bridged only if "" is among the
// prefixes: WithLoggerName("", "http") bridges the root logger and http.*.
// A prefix that can match no name (a trailing dot, an empty segment, a
// wildcard) is told on stderr once, when the core is built.
func WithLoggerName(prefixes ...string) Option {
	return optionFunc(func(c *config) { c.include = append(c.include, prefixes...) })
}

// WithoutLoggerName keeps the loggers with these names and their children
// out of the bridge. It wins over [WithLoggerName]. Without it, the
// prefixes of ZAPLENS_EXCLUDE_LOGGER_NAMES ([EnvExcludeLoggerNames]) are
// used.
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
	return optionFunc(func(c *config) { ctxAttrsOf[baggageKeys](c).add(keys) })
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
