package zaplens

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	"go.opentelemetry.io/otel/trace"

	"github.com/zaplens/zaplens/internal/otlpwire"
)

// logger is a [LoggerProvider]'s log.Logger: it encodes each record to OTLP
// bytes and queues them. The bridge skips Emit and hands it its entries
// directly (see wire.go), so that a zap entry is converted once.
type logger struct {
	embedded.Logger
	p     *LoggerProvider
	scope int    // the pipeline's number for this logger's scope
	name  string // set for a logger past the scope bound: its own scope name

	// Decided once, when the logger is made, for the bridge's direct way:
	// the provider's limits for strings the bridge made valid itself, and
	// the largest record the pipeline takes.
	direct    otlpwire.Limits
	maxRecord int
}

// newLogger makes p's logger for the pipeline's scope number scope.
func newLogger(p *LoggerProvider, scope int, name string) *logger {
	return &logger{p: p, scope: scope, name: name, direct: directLimits(p), maxRecord: p.pipe.MaxRecordBytes()}
}

// loggerKey tells scopes apart as the SDK does.
type loggerKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

// Enabled is true until the provider shuts down: filtering is the bridge's
// job, done before a record is built.
func (l *logger) Enabled(context.Context, log.EnabledParameters) bool { return l.enabled() }

// enabled is Enabled, for the bridge, which needs no parameters to ask.
func (l *logger) enabled() bool { return !l.p.stopped.Load() }

// Emit encodes r as the SDK's pipeline would send it: keys made unique at
// every level (the last value at the first's place), the record limits
// applied, exception attributes derived from r's error, and the trace and
// span of ctx.
func (l *logger) Emit(ctx context.Context, r log.Record) {
	if l.p.stopped.Load() {
		return // as the SDK's loggers after Shutdown: not the pipeline's to count
	}
	e := getEncoder() // for its pooled attribute slice
	defer putEncoder(e)
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		e.kvs = append(e.kvs, kv)
		return true
	})
	dropped := 0
	if limit := l.p.limits.AttributeCount; limit >= 0 && len(e.kvs) > limit {
		dropped = repeatsPastLimit(e.kvs, limit)
	}
	e.kvs = dedup(e.kvs) // maps' keys are made unique as they are encoded
	e.kvs = appendException(e.kvs, r.Err())
	rec := otlpwire.Record{
		Time:         r.Timestamp(),
		Observed:     r.ObservedTimestamp(),
		Severity:     r.Severity(),
		SeverityText: r.SeverityText(),
		Body:         r.Body(),
		EventName:    r.EventName(),
		Dropped:      dropped,
	}
	setSpan(&rec, trace.SpanContextFromContext(ctx))
	l.enqueue(e, &rec, e.kvs, false)
}

// repeatsPastLimit is what the SDK counts as dropped beyond what the count
// limit drops once keys are unique. The SDK adds a record's attributes one
// at a time: it keeps the first limit distinct keys, each with its last
// value, and counts every other attribute as dropped, a repeated key as
// often as it comes; AppendRecord counts each key past the limit once.
// Only a record with more attributes than the limit gets here.
func repeatsPastLimit(kvs []attribute.KeyValue, limit int) int {
	kept := make(map[attribute.Key]struct{}, limit)
	past := map[attribute.Key]struct{}{}
	n := 0
	for _, kv := range kvs {
		if kv.Key == "" {
			continue // left out, and not counted, by both
		}
		if _, ok := kept[kv.Key]; ok {
			continue
		}
		if len(kept) < limit {
			kept[kv.Key] = struct{}{}
			continue
		}
		if _, ok := past[kv.Key]; ok {
			n++
		} else {
			past[kv.Key] = struct{}{}
		}
	}
	return n
}

func setSpan(rec *otlpwire.Record, sc trace.SpanContext) {
	rec.TraceID, rec.SpanID, rec.Flags = sc.TraceID(), sc.SpanID(), sc.TraceFlags()
}

// enqueue encodes rec with attrs, whose keys are unique, into e's record
// buffer and queues it. fromBridge says every string is valid UTF-8
// already and every map's keys unique, as the bridge makes them. A record
// too large for any request has its longest values cut to fit, and is
// counted.
func (l *logger) enqueue(e *attrEncoder, rec *otlpwire.Record, attrs []attribute.KeyValue, fromBridge bool) {
	if rec.Observed.IsZero() {
		rec.Observed = time.Now()
	}
	l.p.setUID(rec)
	if l.name != "" {
		attrs = append(attrs, stringAttr(keyScopeName, l.name))
	}
	lim := l.p.limits
	lim.CheckUTF8, lim.UniqueMaps = !fromBridge, !fromBridge
	buf := otlpwire.AppendRecord(e.record[:0], rec, attrs, lim)
	cut := false
	if max := l.p.pipe.MaxRecordBytes(); len(buf) > max {
		buf, cut = cutRecord(buf, rec, attrs, lim, max), true
	}
	l.p.pipe.Enqueue(l.scope, buf, cut)
	e.keepRecord(buf)
}

// appendException derives exception.message and exception.type from a
// record's error, as the SDK does, unless the record already has them.
func appendException(attrs []attribute.KeyValue, err error) []attribute.KeyValue {
	if err == nil {
		return attrs
	}
	hasMsg, hasType := false, false
	for _, kv := range attrs {
		hasMsg = hasMsg || kv.Key == keyExceptionMessage
		hasType = hasType || kv.Key == keyExceptionType
	}
	if !hasMsg {
		if msg, _, _, perr := describeError(err); perr == nil && msg != "" {
			attrs = append(attrs, stringAttr(keyExceptionMessage, msg))
		}
	}
	if t := sdkErrorType(err); !hasType && t != "" {
		attrs = append(attrs, stringAttr(keyExceptionType, t))
	}
	return attrs
}

// sdkErrorType names an error's type as the SDK does for a record's error:
// an ErrorType method's answer, else the type of the innermost fmt.Errorf
// wrapping, package path and name, or its String for unnamed types. The
// bridge names zap.Error's type its own way (errorType), on both pipelines.
func sdkErrorType(err error) string {
	if et, ok := err.(interface{ ErrorType() string }); ok {
		if s := et.ErrorType(); s != "" {
			return s
		}
	}
	for reflect.TypeOf(err) == fmtWrapType {
		u := errors.Unwrap(err)
		if u == nil {
			break
		}
		err = u
	}
	t := reflect.TypeOf(err)
	if t.PkgPath() != "" && t.Name() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	return t.String()
}

var fmtWrapType = reflect.TypeOf(fmt.Errorf("w: %w", errors.New("e")))
