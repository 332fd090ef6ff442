package zaplens

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// recordedSpan runs log inside a real sdk/trace span and returns the span
// as the recorder read it when it ended.
func recordedSpan(t *testing.T, log func(ctx context.Context)) sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(context.Background(), "step")
	log(ctx)
	span.End()
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended, want 1", len(ended))
	}
	return ended[0]
}

// eventAttrs are an event's attributes by key, as text.
func eventAttrs(ev sdktrace.Event) map[string]string {
	m := map[string]string{}
	for _, kv := range ev.Attributes {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// Entries at or above the level become events of the span in their
// context, on both paths: named by the message, with the record's
// attributes (With's, the fields', the caller, the baggage), a zap.Error
// recorded as the span's error; the status is Error at its own level; the
// records are sent as before.
func TestSpanEvents(t *testing.T) {
	for _, p := range bothPaths(t) {
		t.Run(p.name, func(t *testing.T) {
			l := zap.New(NewCore(WithLoggerProvider(p.provider), WithLevel(zapcore.DebugLevel),
				WithSpanEvents(zapcore.InfoLevel), WithSpanStatus(zapcore.ErrorLevel), WithBaggage()), zap.AddCaller())
			boom := errors.New("boom")
			span := recordedSpan(t, func(ctx context.Context) {
				ctx = withTestBaggage(t, ctx, "tenant", "acme")
				l.Debug("below the event level", Context(ctx))
				w := l.With(Context(ctx), zap.String("job", "train"))
				w.Info("step done", zap.Int("step", 12), zap.Object("o", diffObject{name: "x", n: 1}))
				w.Warn("no status yet", EventName("ev"))
				w.Error("failed", zap.Error(boom))
			})
			evs := span.Events()
			if len(evs) != 4 {
				t.Fatalf("span has %d events, want 4: %v", len(evs), evs)
			}
			for i, want := range []string{"step done", "no status yet", "failed", "exception"} {
				if evs[i].Name != want {
					t.Errorf("event %d is %q, want %q", i, evs[i].Name, want)
				}
			}
			a := eventAttrs(evs[0])
			for k, v := range map[string]string{"job": "train", "step": "12", "tenant": "acme", zapfield.KeyFunctionName: "github.com/zaplens/zaplens.TestSpanEvents.func1.1"} {
				if a[k] != v {
					t.Errorf("event attribute %s = %q, want %q (all: %v)", k, a[k], v, a)
				}
			}
			if _, ok := a["o"]; !ok {
				t.Errorf("the object field is not among the event's attributes: %v", a)
			}
			if x := eventAttrs(evs[3]); x["exception.message"] != "boom" {
				t.Errorf("RecordError's event: %v", x)
			}
			if got, ok := eventAttrs(evs[2])[zapfield.KeyExceptionMessage]; ok {
				t.Errorf("the error entry's event repeats RecordError's exception: %q", got)
			}
			if st := span.Status(); st.Code != codes.Error || st.Description != "failed" {
				t.Errorf("span status %v, want Error \"failed\"", st)
			}
			if got := gotBodies(p.read(t)); fmt.Sprint(got) != "[below the event level step done no status yet failed]" {
				t.Errorf("records %q: the span events took records away", got)
			}
		})
	}
}

// The status alone needs no event, and a span that does not record, or no
// span, is left alone; nothing is asked of spans when neither is set.
func TestSpanStatusAlone(t *testing.T) {
	c := newCapture(t)
	l := zap.New(NewCore(WithLoggerProvider(c.lp), WithSpanStatus(zapcore.WarnLevel)))
	span := recordedSpan(t, func(ctx context.Context) {
		l.Info("fine", Context(ctx))
		l.Warn("degraded", Context(ctx), zap.Int("n", 1))
	})
	if len(span.Events()) != 0 {
		t.Errorf("events %v, want none", span.Events())
	}
	if st := span.Status(); st.Code != codes.Error || st.Description != "degraded" {
		t.Errorf("status %v", st)
	}
	off := zap.New(NewCore(WithLoggerProvider(c.lp)))
	span = recordedSpan(t, func(ctx context.Context) { off.Error("off", Context(ctx), zap.Error(errors.New("x"))) })
	if len(span.Events()) != 0 || span.Status().Code != codes.Unset {
		t.Errorf("with neither option: events %v, status %v", span.Events(), span.Status())
	}
	on := zap.New(NewCore(WithLoggerProvider(c.lp), WithSpanEvents(zapcore.DebugLevel), WithSpanStatus(zapcore.DebugLevel)))
	on.Error("not recording", Context(newDiffSpans(t).unsampled))
	on.Error("no span")
	if n := len(c.records()); n != 5 {
		t.Errorf("%d records, want 5: every entry still a record", n)
	}
}

// The provider's Enabled does not stop the event: a trace UI with no log
// backend still shows the line.
func TestSpanEventsWithoutProvider(t *testing.T) {
	c := &capture{}
	lp := newFilteredProvider(t, c, "never")
	l := zap.New(NewCore(WithLoggerProvider(lp), WithSpanEvents(zapcore.InfoLevel)))
	span := recordedSpan(t, func(ctx context.Context) { l.Info("only on the span", Context(ctx), zap.Bool("ok", true)) })
	if evs := span.Events(); len(evs) != 1 || evs[0].Name != "only on the span" || len(evs[0].Attributes) != 1 ||
		evs[0].Attributes[0] != attribute.Bool("ok", true) {
		t.Errorf("events %v", evs)
	}
	if len(c.records()) != 0 {
		t.Errorf("the provider got a record it did not want")
	}
}

// Span events leave the records as they were: the differential script
// through bridges with span events and status on, on a zaplens provider
// (where they take the general way), against the SDK's pipeline with
// neither.
func TestSpanEventsKeepRecords(t *testing.T) {
	cleanEnv(t)
	pair := newDiffPair(t)
	spans := newDiffSpans(t)
	for i, side := range pair.sides() {
		var opts []Option
		if i == 1 {
			opts = []Option{WithSpanEvents(zapcore.DebugLevel), WithSpanStatus(zapcore.ErrorLevel)}
		}
		b := newDiffBridges(side.provider, newDiffClock(), opts...)
		diffScript(b.core, spans)
		diffScript(b.tee, spans)
	}
	n, report, _ := pair.compare(t, pair.start, func(*commonpb.InstrumentationScope) bool { return true })
	if report != "" {
		t.Fatal(report)
	}
	t.Logf("%d records compared, equal", n)
}

// An error entry's stack goes to RecordError's event, with the exception.
func TestSpanEventsStack(t *testing.T) {
	c := newCapture(t)
	l := zap.New(NewCore(WithLoggerProvider(c.lp), WithSpanEvents(zapcore.ErrorLevel)), zap.AddStacktrace(zapcore.ErrorLevel))
	span := recordedSpan(t, func(ctx context.Context) {
		l.Error("failed", Context(ctx), zap.Error(errors.New("boom")), zap.Int("n", 1))
	})
	evs := span.Events()
	if len(evs) != 2 {
		t.Fatalf("events %v", evs)
	}
	if line := eventAttrs(evs[0]); len(line) != 1 || line["n"] != "1" {
		t.Errorf("the line's event has %v, want n alone", line)
	}
	if x := eventAttrs(evs[1]); x[zapfield.KeyExceptionStack] == "" || x[zapfield.KeyExceptionMessage] != "boom" {
		t.Errorf("the exception event has %v, want the message and the stack", x)
	}
}
