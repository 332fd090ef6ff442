package otlpwire

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of logs.v1 LogRecord.
const (
	recTime         = 1
	recSeverity     = 2
	recSeverityText = 3
	recBody         = 5
	recAttributes   = 6
	recDropped      = 7
	recFlags        = 8
	recTraceID      = 9
	recSpanID       = 10
	recObserved     = 11
	recEventName    = 12
)

// Record is everything of a log record but its attributes, which are passed
// beside it so that a caller can hand over a slice it already holds.
type Record struct {
	Time         time.Time
	Observed     time.Time
	Severity     log.Severity
	SeverityText string
	Body         attribute.Value
	EventName    string
	TraceID      trace.TraceID
	SpanID       trace.SpanID
	Flags        trace.TraceFlags
	// Dropped is how many attributes were dropped before these; the limit
	// adds what it drops.
	Dropped int
	// UID, when not zero, is sent as the log.record.uid attribute, after
	// the others and outside the count limit: the record's identity, not
	// its content.
	UID UID
}

// AppendRecord appends the content of a LogRecord message (no tag, no
// length) made of r and attrs, whose keys must already be unique. Attributes
// with an empty key are left out, as the SDK leaves them out.
func AppendRecord(b []byte, r *Record, attrs []attribute.KeyValue, lim Limits) []byte {
	e := encoder{Limits: lim}
	b = AppendHead(b, r, &lim)
	dropped := r.Dropped
	kept := 0
	for _, kv := range attrs {
		if kv.Key == "" {
			continue
		}
		if lim.AttributeCount >= 0 && kept >= lim.AttributeCount {
			dropped++
			continue
		}
		kept++
		b = e.appendKeyValue(b, recAttributes, kv, attrDepth(kv.Value))
	}
	return AppendTail(b, r, dropped)
}

// A record can also be written in three steps, for a caller that writes
// its attributes itself, one at a time (see attr.go): AppendHead, then the
// attributes, then AppendTail. The bytes are AppendRecord's.

// AppendHead appends what of r comes before its attributes: times,
// severity, event name and body.
func AppendHead(b []byte, r *Record, lim *Limits) []byte {
	b = appendFixed64Field(b, recTime, unixNano(r.Time))
	b = appendFixed64Field(b, recObserved, unixNano(r.Observed))
	b = appendVarintField(b, recSeverity, severityNumber(r.Severity))
	b = appendStringField(b, recSeverityText, lim.valid(r.SeverityText))
	b = appendStringField(b, recEventName, lim.valid(r.EventName))
	if r.Body.Type() == attribute.STRING {
		// The bridge's body, a message: no limit, nothing nested, and a
		// size known ahead, so that a long one is written once.
		s := lim.valid(r.Body.AsString())
		b = appendTag(b, recBody, protowire.BytesType)
		b = appendVarint(b, uint64(1+protowire.SizeBytes(len(s))))
		return appendString(b, anyString, s)
	}
	body := encoder{Limits: *lim} // the SDK limits attributes only
	body.ValueLength = -1
	return body.appendValue(b, recBody, r.Body, -1)
}

// AppendTail appends what of r comes after its attributes: the count of
// attributes dropped, the trace flags and the trace and span ids.
func AppendTail(b []byte, r *Record, dropped int) []byte {
	if r.UID != (UID{}) {
		b = appendUID(b, r.UID)
	}
	b = appendVarintField(b, recDropped, uint64(clampUint32(dropped)))
	if r.Flags != 0 {
		b = appendTag(b, recFlags, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, uint32(r.Flags))
	}
	if r.TraceID.IsValid() {
		b = appendTag(b, recTraceID, protowire.BytesType)
		b = appendLenBytes(b, r.TraceID[:])
	}
	if r.SpanID.IsValid() {
		b = appendTag(b, recSpanID, protowire.BytesType)
		b = appendLenBytes(b, r.SpanID[:])
	}
	return b
}

// attrDepth is the depth an attribute's value may have: the SDK limits
// maps and slices, and leaves other values alone.
func attrDepth(v attribute.Value) int {
	if t := v.Type(); t == attribute.MAP || t == attribute.SLICE {
		return maxDepth
	}
	return -1
}

// severityNumber is the SDK's: a severity that no OTLP SeverityNumber
// names (below Trace1, above Fatal4) is sent as unspecified.
func severityNumber(s log.Severity) uint64 {
	if s < log.SeverityTrace1 || s > log.SeverityFatal4 {
		return 0
	}
	return uint64(s)
}

// unixNano is the SDK's timeUnixNano: zero for the zero time and any time
// before 1970.
func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	n := t.UnixNano()
	if n < 0 {
		return 0
	}
	return uint64(n)
}

func clampUint32(v int) uint32 {
	switch {
	case v < 0:
		return 0
	case int64(v) > 1<<32-1:
		return 1<<32 - 1
	}
	return uint32(v)
}

// SetSpan sets the record's trace, span and flags from sc.
func (r *Record) SetSpan(sc trace.SpanContext) {
	r.TraceID, r.SpanID, r.Flags = sc.TraceID(), sc.SpanID(), sc.TraceFlags()
}
