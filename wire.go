package zaplens

import (
	"time"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/zapfield"
)

// On a zaplens provider an entry becomes OTLP bytes the direct way when
// it can, else the general way: internal/zapfield converts it either way
// (its wire.go tells how). What is the bridge's is here: whether the
// logger takes the direct way at all, the bound of a record, and where the
// record goes (the queue, or the trace's hold).

// writeDirect writes the entry, whose record but its attributes is rec,
// the direct way and queues it, or reports false, having queued nothing,
// when the entry needs the general way. e is scratch for fields of other
// kinds, its encoder left as AppendDirect leaves it.
func (c *Core) writeDirect(s *scope, e *entryState, rec *otlpwire.Record, ent *zapcore.Entry, fields []zapcore.Field, held bool) bool {
	t := &s.terms
	if !c.with.Direct() || !t.Direct {
		// With fields the direct way leaves to the general one, or a
		// scope past the bound, whose name the general way adds.
		return false
	}
	if t.UIDs {
		rec.UID = s.wire.UID(rec.Observed)
	}
	b, ok := e.enc.AppendDirect(e.record[:0], &c.with, rec, ent, fields, t.Limits)
	e.keepRecord(b)
	if !ok || len(b) > t.MaxRecordBytes {
		return false // a record too large is cut, the general way
	}
	if !held || !c.b.hold.keepWire(rec.TraceID, rec.Observed, s.wire, &t.Limits, b, false) {
		s.wire.Enqueue(b, false)
	}
	return true
}

// setWireRecord makes rec, a zero Record, the entry's record but its
// attributes.
func setWireRecord(rec *otlpwire.Record, ent *zapcore.Entry, sev log.Severity, sc trace.SpanContext, event string) {
	rec.EventName = event
	rec.Time = ent.Time
	rec.Observed = ent.Time // zap read the clock a moment ago: no need to again
	if ent.Time.IsZero() {
		rec.Observed = time.Now()
	}
	rec.Severity = sev
	rec.SeverityText = ent.Level.String()
	rec.Body = zapfield.StringValue(ent.Message)
	rec.SetSpan(sc)
}
