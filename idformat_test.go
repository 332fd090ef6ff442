package zaplens

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// unsampledSpanContext starts a real span that the SDK does not sample: its
// ids are valid, its sampled flag is off.
func unsampledSpanContext(t testing.TB) (context.Context, trace.SpanContext) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	ctx, span := tp.Tracer("test").Start(context.Background(), "step")
	t.Cleanup(func() { span.End() })
	if sc := span.SpanContext(); !sc.IsValid() || sc.IsSampled() {
		t.Fatalf("unsampled span context %v", sc)
	}
	return ctx, span.SpanContext()
}

// fixedSpan is a context whose span has the given ids and flags.
func fixedSpan(tid trace.TraceID, sid trace.SpanID, flags trace.TraceFlags) (context.Context, trace.SpanContext) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags})
	return trace.ContextWithSpanContext(context.Background(), sc), sc
}

// datadogID is the decimal string of the lower 64 bits of an id, read
// big-endian: Datadog's form of an OpenTelemetry id.
func datadogID(id []byte) string {
	return strconv.FormatUint(binary.BigEndian.Uint64(id[len(id)-8:]), 10)
}

// wantIDs is what each provided format must print for sc, beside level
// and msg.
func wantIDs(name string, sc trace.SpanContext) map[string]any {
	tid, sid := sc.TraceID(), sc.SpanID()
	switch name {
	case "default":
		return map[string]any{"trace_id": tid.String(), "span_id": sid.String()}
	case "trace keys":
		return map[string]any{"tid": tid.String(), "sid": sid.String()}
	case "datadog":
		return map[string]any{"dd.trace_id": datadogID(tid[:]), "dd.span_id": datadogID(sid[:])}
	case "ecs":
		return map[string]any{"trace.id": tid.String(), "span.id": sid.String()}
	case "google":
		return map[string]any{
			"logging.googleapis.com/trace":         "projects/my-project/traces/" + tid.String(),
			"logging.googleapis.com/spanId":        sid.String(),
			"logging.googleapis.com/trace_sampled": sc.IsSampled(),
		}
	}
	panic(name)
}

var formatOptions = []struct {
	name string
	opt  Option
}{
	{"default", nil},
	{"trace keys", WithTraceKeys("tid", "sid")},
	{"datadog", WithIDFormat(DatadogIDs())},
	{"ecs", WithIDFormat(ECSIDs())},
	{"google", WithIDFormat(GoogleCloudIDs("my-project"))},
}

// checkLine compares a decoded base line with level, msg and want.
func checkLine(t *testing.T, line map[string]any, msg string, want map[string]any) {
	t.Helper()
	if line["msg"] != msg || len(line) != len(want)+2 {
		t.Errorf("line %v, want msg %q and exactly %v", line, msg, want)
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %#v, want %#v", k, line[k], v)
		}
	}
}

// Each format's JSON line carries the span's ids in that format; the record
// carries them in its own fields and gains no attribute.
func TestIDFormats(t *testing.T) {
	sampledCtx, sampled := spanContext(t)
	unsampledCtx, unsampled := unsampledSpanContext(t)
	for _, f := range formatOptions {
		t.Run(f.name, func(t *testing.T) {
			c := newCapture(t)
			base := newJSONBase(zapcore.InfoLevel)
			logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp), f.opt))
			logger.Info("sampled", Context(sampledCtx))
			logger.Info("unsampled", Context(unsampledCtx))
			logger.With(Context(sampledCtx)).Info("from With")
			logger.Info("no span", Context(context.Background()))

			lines := base.lines(t)
			checkLine(t, lines[0], "sampled", wantIDs(f.name, sampled))
			checkLine(t, lines[1], "unsampled", wantIDs(f.name, unsampled))
			checkLine(t, lines[2], "from With", wantIDs(f.name, sampled))
			checkLine(t, lines[3], "no span", nil)
			for i, r := range c.records() {
				if n := len(attrs(r)); n != 0 {
					t.Errorf("record %d has %d attributes, want none", i, n)
				}
			}
			if r := c.records()[0]; r.TraceID() != sampled.TraceID() || r.SpanID() != sampled.SpanID() {
				t.Errorf("record ids %v/%v, want %v/%v", r.TraceID(), r.SpanID(), sampled.TraceID(), sampled.SpanID())
			}
		})
	}
}

// The decimal form at its edges: the top bit set (no sign), leading zero
// bytes, the upper half of the trace id ignored, the largest value.
func TestDatadogDecimal(t *testing.T) {
	for _, tc := range []struct {
		tid        trace.TraceID
		sid        trace.SpanID
		wantTrace  string
		wantSpanID string
	}{
		{
			trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
			trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
			"11803532876627986230", "67667974448284343",
		},
		{
			trace.TraceID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1},
			trace.SpanID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			"1", "18446744073709551615",
		},
	} {
		ctx, _ := fixedSpan(tc.tid, tc.sid, trace.FlagsSampled)
		base := newJSONBase(zapcore.InfoLevel)
		zap.New(NewTee(base.core, WithIDFormat(DatadogIDs()))).Info("m", Context(ctx))
		line := base.lines(t)[0]
		if line["dd.trace_id"] != tc.wantTrace || line["dd.trace_id"] != datadogID(tc.tid[:]) {
			t.Errorf("dd.trace_id %v, want %s", line["dd.trace_id"], tc.wantTrace)
		}
		if line["dd.span_id"] != tc.wantSpanID || line["dd.span_id"] != datadogID(tc.sid[:]) {
			t.Errorf("dd.span_id %v, want %s", line["dd.span_id"], tc.wantSpanID)
		}
	}
}

// The cache keeps one span: lines that alternate between spans still get
// their own ids, in every format.
func TestIDFormatsAlternatingSpans(t *testing.T) {
	ctxA, scA := spanContext(t)
	ctxB, scB := unsampledSpanContext(t)
	for _, f := range formatOptions {
		base := newJSONBase(zapcore.InfoLevel)
		logger := zap.New(NewTee(base.core, f.opt))
		for range 2 {
			logger.Info("a", Context(ctxA))
			logger.Info("b", Context(ctxB))
		}
		for i, line := range base.lines(t) {
			sc, msg := scA, "a"
			if i%2 == 1 {
				sc, msg = scB, "b"
			}
			checkLine(t, line, msg, wantIDs(f.name, sc))
		}
	}
}

// GoogleCloudIDs("") reads the project when its option is applied: not
// when the option is made, nor on later lines.
func TestGoogleCloudProjectFromEnv(t *testing.T) {
	ctx, sc := spanContext(t)
	opt := WithIDFormat(GoogleCloudIDs(""))
	t.Setenv(googleProjectEnv, "env-project")
	base := newJSONBase(zapcore.InfoLevel)
	logger := zap.New(NewTee(base.core, opt))
	t.Setenv(googleProjectEnv, "later")
	logger.Info("m", Context(ctx))

	t.Setenv(googleProjectEnv, "")
	zap.New(NewTee(base.core, opt)).Info("m", Context(ctx))

	lines := base.lines(t)
	if got := lines[0]["logging.googleapis.com/trace"]; got != "projects/env-project/traces/"+sc.TraceID().String() {
		t.Errorf("trace %v, want the project read when the option was applied", got)
	}
	if got := lines[1]["logging.googleapis.com/trace"]; got != sc.TraceID().String() {
		t.Errorf("trace without a project %v, want the bare hex id", got)
	}
}

// traceparent is a user's own format: the W3C header's form, one field.
type traceparent struct{}

func (traceparent) AppendIDs(fields []zapcore.Field, sc trace.SpanContext) []zapcore.Field {
	return append(fields, zap.String("traceparent",
		fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags())))
}

func TestCustomIDFormat(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp), WithIDFormat(traceparent{})))
	logger.Info("m", Context(ctx), zap.Int("n", 1))
	logger.Info("none")

	lines := base.lines(t)
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	checkLine(t, lines[0], "m", map[string]any{"traceparent": want, "n": 1.0})
	checkLine(t, lines[1], "none", nil)
	if r := c.records()[0]; r.TraceID() != sc.TraceID() || len(attrs(r)) != 1 {
		t.Errorf("record trace %v attributes %v", r.TraceID(), attrs(r))
	}
}

// WithIDFormat and WithTraceKeys set one thing; the last given wins, and
// nil or two empty keys print no ids.
func TestIDFormatLastOptionWins(t *testing.T) {
	ctx, sc := spanContext(t)
	for _, tc := range []struct {
		name string
		opts []Option
		want map[string]any
	}{
		{"format then keys", []Option{WithIDFormat(DatadogIDs()), WithTraceKeys("tid", "sid")}, wantIDs("trace keys", sc)},
		{"keys then format", []Option{WithTraceKeys("tid", "sid"), WithIDFormat(DatadogIDs())}, wantIDs("datadog", sc)},
		{"nil format", []Option{WithIDFormat(nil)}, nil},
		{"empty keys", []Option{WithIDFormat(ECSIDs()), WithTraceKeys("", "")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := newJSONBase(zapcore.InfoLevel)
			zap.New(NewTee(base.core, tc.opts...)).Info("m", Context(ctx))
			checkLine(t, base.lines(t)[0], "m", tc.want)
		})
	}
}

// A logger wrapped twice prints the outer tee's format only: the outer one
// is the first to see the entry, and an inner one cannot know of it through
// wrappers between.
func TestIDFormatWrappedTwice(t *testing.T) {
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	logger := zap.New(base.core).
		WithOptions(WrapCore(WithIDFormat(DatadogIDs()))).
		WithOptions(WrapCore(WithIDFormat(ECSIDs())))
	logger.Info("m", Context(ctx))
	checkLine(t, base.lines(t)[0], "m", wantIDs("ecs", sc))
}

type panickingFormat struct{}

// AppendIDs adds half of what it would, then panics: the half must not
// reach the line.
func (panickingFormat) AppendIDs(fields []zapcore.Field, _ trace.SpanContext) []zapcore.Field {
	if half := append(fields, zap.String("half", "done")); len(half) > 0 {
		panic("boom")
	}
	return fields
}

// A format that panics costs the line its ids, not the line; the record is
// sent as usual.
func TestPanickingIDFormat(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp), WithIDFormat(panickingFormat{})))
	logger.Info("m", Context(ctx), zap.Int("n", 1))
	logger.With(Context(ctx)).Info("from With")

	lines := base.lines(t)
	checkLine(t, lines[0], "m", map[string]any{keyIDFormatError: "PANIC=boom", "n": 1.0})
	checkLine(t, lines[1], "from With", map[string]any{keyIDFormatError: "PANIC=boom"})
	for i, r := range c.records() {
		if r.TraceID() != sc.TraceID() {
			t.Errorf("record %d lost its trace", i)
		}
	}
}

// Every provided format prints a span's ids without allocating: they are
// rendered once per span. Base is zap's JSON core, so the figure is the
// whole line's, base and bridge.
func TestAllocationsIDFormats(t *testing.T) {
	skipAllocsUnderRace(t)
	ctx, _ := spanContext(t)
	fields := fiveFieldsAndContext(ctx)
	otherCtx, _ := unsampledSpanContext(t)
	other := append([]zap.Field{Context(otherCtx)}, fields[1:]...)
	for _, f := range formatOptions {
		logger := zap.New(NewTee(jsonDiscard(), WithLoggerProvider(discardProvider{}), f.opt))
		with := logger.With(Context(ctx))
		if n := testing.AllocsPerRun(200, func() { logger.Info("i", fields...) }); n != 0 {
			t.Errorf("%s: %v allocations per line, want 0", f.name, n)
		}
		if n := testing.AllocsPerRun(200, func() { with.Info("i", fields[1:]...) }); n != 0 {
			t.Errorf("%s, context from With: %v allocations per line, want 0", f.name, n)
		}
		// A new span costs its rendering: the string and the record of it.
		if n := testing.AllocsPerRun(200, func() {
			logger.Info("i", fields...)
			logger.Info("i", other...)
		}); n != 4 {
			t.Errorf("%s, spans alternating: %v allocations per two lines, want 4", f.name, n)
		}
	}
}
