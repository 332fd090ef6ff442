package zaplens

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/otlpwire"
	"github.com/zaplens/zaplens/internal/zapfield"
)

// spanConfig is what WithSpanEvents and WithSpanStatus set.
type spanConfig struct {
	on     bool                 // either is set: the one test an entry pays when neither is
	events zapcore.LevelEnabler // nil: no span events
	status zapcore.LevelEnabler // nil: no status
}

func (s *spanConfig) setEvents(l zapcore.LevelEnabler) {
	s.events = l
	s.on = s.events != nil || s.status != nil
}

func (s *spanConfig) setStatus(l zapcore.LevelEnabler) {
	s.status = l
	s.on = s.events != nil || s.status != nil
}

// mark sets the status of the entry's recording span, when asked, and
// returns the span when the entry is also to be an event on it; nil else.
// The status needs no attribute, so it is set here, whatever way the
// record then takes.
func (s spanConfig) mark(ctx context.Context, ent zapcore.Entry) trace.Span {
	event := s.events != nil && s.events.Enabled(ent.Level)
	status := s.status != nil && s.status.Enabled(ent.Level)
	if !event && !status {
		return nil
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return nil
	}
	if status {
		span.SetStatus(codes.Error, otlpwire.ValidString(ent.Message))
	}
	if !event {
		return nil
	}
	return span
}

// addEvent adds the entry to span as an event with the record's
// attributes, redacted as the provider redacts them, and its error, if
// any, as the span's: the exception's message and type are then the error
// event's, as RecordError makes them, and the stack goes with them, not on
// the line's event. Where the exception's message or type is redacted,
// RecordError, which reads the error's own text, is not called: the event
// it would add is added with the record's exception attributes.
func (s spanConfig) addEvent(span trace.Span, ent zapcore.Entry, err error, attrs []attribute.KeyValue, redact *otlpwire.Redactor) {
	if err == nil {
		span.AddEvent(otlpwire.ValidString(ent.Message), trace.WithTimestamp(ent.Time), trace.WithAttributes(attrs...))
		return
	}
	line := make([]attribute.KeyValue, 0, len(attrs))
	var exception, stack []attribute.KeyValue
	for _, kv := range attrs {
		switch kv.Key {
		case zapfield.KeyExceptionMessage, zapfield.KeyExceptionType:
			exception = append(exception, kv)
		case zapfield.KeyExceptionStack:
			stack = append(stack, kv)
		default:
			line = append(line, kv)
		}
	}
	span.AddEvent(otlpwire.ValidString(ent.Message), trace.WithTimestamp(ent.Time), trace.WithAttributes(line...))
	if redact.Match(zapfield.KeyExceptionMessage) || redact.Match(zapfield.KeyExceptionType) {
		span.AddEvent(exceptionEvent, trace.WithTimestamp(ent.Time), trace.WithAttributes(append(exception, stack...)...))
		return
	}
	span.RecordError(err, trace.WithTimestamp(ent.Time), trace.WithAttributes(stack...))
}

// exceptionEvent is the name RecordError gives its event, the semantic
// conventions' for an exception.
const exceptionEvent = "exception"
