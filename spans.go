package zaplens

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap/zapcore"
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
		span.SetStatus(codes.Error, validString(ent.Message))
	}
	if !event {
		return nil
	}
	return span
}

// addEvent adds the entry to span as an event with the record's
// attributes, and its error, if any, as the span's.
func (s spanConfig) addEvent(span trace.Span, ent zapcore.Entry, err error, attrs []attribute.KeyValue) {
	span.AddEvent(validString(ent.Message), trace.WithTimestamp(ent.Time), trace.WithAttributes(attrs...))
	if err != nil {
		span.RecordError(err, trace.WithTimestamp(ent.Time))
	}
}
