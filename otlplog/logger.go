package otlplog

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/zaplens/zaplens/internal/direct"
	"github.com/zaplens/zaplens/internal/otlpwire"
)

// logger is a [LoggerProvider]'s log.Logger: it encodes each record to OTLP
// bytes and queues them. It is a direct.Logger: the zaplens bridge skips
// Emit and hands it its entries as bytes, so that a zap entry is
// converted once.
type logger struct {
	embedded.Logger
	p     *LoggerProvider
	scope int    // the pipeline's number for this logger's scope
	name  string // set for a logger past the scope bound: its own scope name
	terms direct.Terms
}

var _ direct.Logger = (*logger)(nil)

// newLogger makes p's logger for the pipeline's scope number scope.
func newLogger(p *LoggerProvider, scope int, name string) *logger {
	return &logger{p: p, scope: scope, name: name, terms: direct.Terms{
		Direct:         name == "", // the general way adds the scope's name
		Limits:         p.DirectLimits(),
		MaxRecordBytes: p.pipe.MaxRecordBytes(),
		UIDs:           p.uids != nil,
	}}
}

// loggerKey tells scopes apart as the SDK does.
type loggerKey struct {
	name, version, schemaURL string
	attrs                    attribute.Distinct
}

// Enabled is true until the provider shuts down: filtering is the bridge's
// job, done before a record is built.
func (l *logger) Enabled(context.Context, log.EnabledParameters) bool { return l.Open() }

// Open is Enabled, for the bridge, which needs no parameters to ask.
func (l *logger) Open() bool { return !l.p.stopped.Load() }

// Terms are the logger's terms for the bridge, decided when it was made.
func (l *logger) Terms() direct.Terms { return l.terms }

// UID is the log.record.uid of a record observed at t; zero without
// WithRecordUID.
func (l *logger) UID(t time.Time) otlpwire.UID {
	if l.p.uids == nil {
		return otlpwire.UID{}
	}
	return l.p.uids.next(t)
}

// Enqueue queues a record the bridge wrote whole.
func (l *logger) Enqueue(record []byte, cut bool) { l.p.pipe.Enqueue(l.scope, record, cut) }

// EnqueueAttributes encodes and queues a record the bridge converted to
// attributes: its strings are valid and its maps' keys unique already.
func (l *logger) EnqueueAttributes(buf []byte, rec otlpwire.Record, attrs []attribute.KeyValue) []byte {
	return l.enqueue(buf, &rec, attrs, true)
}

// AppendAttributes encodes as EnqueueAttributes does, and queues nothing.
func (l *logger) AppendAttributes(buf []byte, rec otlpwire.Record, attrs []attribute.KeyValue) ([]byte, bool) {
	return l.encode(buf, &rec, attrs, true)
}

// Emit encodes r as the SDK's pipeline would send it: keys made unique at
// every level (the last value at the first's place), the record limits
// applied, exception attributes derived from r's error, and the trace and
// span of ctx.
func (l *logger) Emit(ctx context.Context, r log.Record) {
	if l.p.stopped.Load() {
		return // as the SDK's loggers after Shutdown: not the pipeline's to count
	}
	e := getScratch()
	defer putScratch(e)
	r.WalkAttributes(func(kv attribute.KeyValue) bool {
		e.kvs = append(e.kvs, kv)
		return true
	})
	dropped := 0
	if limit := l.p.limits.AttributeCount; limit >= 0 && len(e.kvs) > limit {
		dropped = repeatsPastLimit(e.kvs, limit)
	}
	e.kvs = otlpwire.Dedup(e.kvs) // maps' keys are made unique as they are encoded
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
	rec.SetSpan(trace.SpanContextFromContext(ctx))
	e.record = l.enqueue(e.record[:0], &rec, e.kvs, false)
}

// scratch is an Emit's room, pooled: the record's attributes and bytes.
type scratch struct {
	kvs    []attribute.KeyValue
	record []byte
}

// Bounds on what the pool keeps, so that one huge record does not pin a
// huge buffer.
const (
	maxPooledAttrs  = 256
	maxPooledRecord = 64 << 10
)

var scratchPool = sync.Pool{New: func() any {
	return &scratch{kvs: make([]attribute.KeyValue, 0, 16)}
}}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	clear(s.kvs)
	if cap(s.kvs) > maxPooledAttrs {
		s.kvs = nil
	}
	s.kvs = s.kvs[:0]
	if cap(s.record) > maxPooledRecord {
		s.record = nil
	}
	scratchPool.Put(s)
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

// enqueue encodes rec with attrs, whose keys are unique, into buf's room
// and queues it, and returns the buffer. fromBridge says every string is
// valid UTF-8 already and every map's keys unique, as the bridge makes
// them. A record too large for any request has its longest values cut to
// fit, and is counted.
func (l *logger) enqueue(buf []byte, rec *otlpwire.Record, attrs []attribute.KeyValue, fromBridge bool) []byte {
	buf, cut := l.encode(buf, rec, attrs, fromBridge)
	l.p.pipe.Enqueue(l.scope, buf, cut)
	return buf
}

// encode is enqueue's encoding: the record, cut if it is too large for any
// request.
func (l *logger) encode(buf []byte, rec *otlpwire.Record, attrs []attribute.KeyValue, fromBridge bool) ([]byte, bool) {
	if rec.Observed.IsZero() {
		rec.Observed = time.Now()
	}
	l.p.setUID(rec)
	if l.name != "" {
		attrs = append(attrs, attribute.String(keyScopeName, otlpwire.ValidString(l.name)))
	}
	lim := l.p.limits
	lim.CheckUTF8, lim.UniqueMaps = !fromBridge, !fromBridge
	buf = otlpwire.AppendRecord(buf, rec, attrs, lim)
	cut := false
	if max := l.p.pipe.MaxRecordBytes(); len(buf) > max {
		buf, cut = cutRecord(buf, rec, attrs, lim, max), true
	}
	return buf, cut
}

// appendException derives exception.message and exception.type from a
// record's error, as the SDK does, unless the record already has them.
func appendException(attrs []attribute.KeyValue, err error) []attribute.KeyValue {
	if err == nil {
		return attrs
	}
	hasMsg, hasType := false, false
	for _, kv := range attrs {
		hasMsg = hasMsg || kv.Key == semconv.ExceptionMessageKey
		hasType = hasType || kv.Key == semconv.ExceptionTypeKey
	}
	if msg := errorMessage(err); !hasMsg && msg != "" {
		attrs = append(attrs, semconv.ExceptionMessage(msg))
	}
	if t := sdkErrorType(err); !hasType && t != "" {
		attrs = append(attrs, semconv.ExceptionType(t))
	}
	return attrs
}

// errorMessage is err's Error, as the SDK takes it; "<nil>" for a nil
// pointer whose Error panics, as zap prints it, and "" for any other
// panic, which leaves the message out: the record keeps the rest.
func errorMessage(err error) (msg string) {
	defer func() {
		if recover() != nil {
			msg = ""
			if rv := reflect.ValueOf(err); rv.Kind() == reflect.Pointer && rv.IsNil() {
				msg = "<nil>"
			}
		}
	}()
	return err.Error()
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
