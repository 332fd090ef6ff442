package integration

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/victorialogs"
)

// vlLine is a line as VictoriaLogs should store it: every value a string,
// a map's keys joined to its parent's with '.', a slice as its JSON, bytes
// as base64, the body in _msg and the resource's attributes as fields.
type vlLine struct {
	service, msg, scope, level, severity string
	span                                 trace.SpanContext // zero: logged outside any span
	fields                               map[string]string // every attribute the line carries, caller aside
}

// TestVictoriaLogsQueries: lines of two services, several spans of two
// traces, named loggers, errors, a namespace and every field kind of the
// README's table, queried back from VictoriaLogs by trace id, span id,
// service.name, stream and severity. Each query returns exactly the lines
// it should, each with exactly its fields.
func TestVictoriaLogsQueries(t *testing.T) {
	s := vlStart(t, "", t.TempDir())
	trainP, _ := vlProvider(t, s.LogsURL(), "vl-trainer")
	evalP, _ := vlProvider(t, s.LogsURL(), "vl-eval")
	atInfo := zaplens.WithLevel(zapcore.InfoLevel)
	trainer := e2eLogger(trainP, e2eDiscard{}, atInfo, zaplens.WithDefaultScope("trainer"))
	evaluator := e2eLogger(evalP, e2eDiscard{}, atInfo)

	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tracer := tp.Tracer("vl")
	var lines []vlLine
	add := func(l vlLine) { lines = append(lines, l) }

	trainer.Info("started", zap.String("run", "r1"))
	add(vlLine{"vl-trainer", "started", "trainer", "info", "9", trace.SpanContext{}, map[string]string{"run": "r1"}})

	// Trace 1: a root span and two children, in the trainer.
	rctx, root := tracer.Start(context.Background(), "train")
	dctx, dspan := tracer.Start(rctx, "data")
	data := trainer.Named("trainer").Named("data")
	data.Debug("prefetch", zaplens.Context(dctx)) // below zaplens's level: never stored
	data.Info("batch ready", append([]zap.Field{zaplens.Context(dctx)}, vlEveryKind()...)...)
	add(vlLine{"vl-trainer", "batch ready", "trainer.data", "info", "9", dspan.SpanContext(), vlEveryKindStored})
	dspan.End()

	octx, ospan := tracer.Start(rctx, "optim")
	optim := trainer.Named("trainer").Named("optim")
	optim.Warn("grad clipped", zaplens.Context(octx), zap.Float64("norm", 9.5))
	add(vlLine{"vl-trainer", "grad clipped", "trainer.optim", "warn", "13", ospan.SpanContext(), map[string]string{"norm": "9.5"}})
	optim.Error("step failed", zaplens.Context(octx), zap.Error(errors.New("nan loss")), zap.NamedError("cause", errors.New("disk full")))
	add(vlLine{"vl-trainer", "step failed", "trainer.optim", "error", "17", ospan.SpanContext(), map[string]string{
		"exception.message": "nan loss", "exception.type": "*errors.errorString", "cause": "disk full"}})
	// The context and a namespace set once with With; the namespace holds
	// every later field.
	optim.With(zaplens.Context(octx), zap.String("run", "r1"), zap.Namespace("metrics"), zap.Float64("loss", 0.25)).
		Info("step done", zap.Int("tokens", 2048))
	add(vlLine{"vl-trainer", "step done", "trainer.optim", "info", "9", ospan.SpanContext(), map[string]string{
		"run": "r1", "metrics.loss": "0.25", "metrics.tokens": "2048"}})
	ospan.End()
	trainer.Named("trainer").Info("epoch done", zaplens.Context(rctx), zap.Int("epoch", 1))
	add(vlLine{"vl-trainer", "epoch done", "trainer", "info", "9", root.SpanContext(), map[string]string{"epoch": "1"}})
	root.End()

	// Trace 2, in the evaluator.
	ectx, espan := tracer.Start(context.Background(), "eval")
	eval := evaluator.Named("eval")
	eval.Info("eval done", zaplens.Context(ectx), zap.Float64("acc", 0.9))
	add(vlLine{"vl-eval", "eval done", "eval", "info", "9", espan.SpanContext(), map[string]string{"acc": "0.9"}})
	eval.Error("eval failed", zaplens.Context(ectx), zap.Error(errors.New("no data")))
	add(vlLine{"vl-eval", "eval failed", "eval", "error", "17", espan.SpanContext(), map[string]string{
		"exception.message": "no data", "exception.type": "*errors.errorString"}})
	espan.End()

	e2eFlush(t, trainP)
	e2eFlush(t, evalP)

	trace1, trace2 := root.SpanContext().TraceID().String(), espan.SpanContext().TraceID().String()
	where := func(keep func(vlLine) bool) []vlLine {
		var out []vlLine
		for _, l := range lines {
			if keep(l) {
				out = append(out, l)
			}
		}
		return out
	}
	for _, q := range []struct {
		query string
		want  []vlLine
	}{
		{"*", lines},
		{"trace_id:=" + trace1, where(func(l vlLine) bool { return l.span.TraceID().String() == trace1 })},
		{"trace_id:=" + trace2, where(func(l vlLine) bool { return l.span.TraceID().String() == trace2 })},
		{"span_id:=" + ospan.SpanContext().SpanID().String(), where(func(l vlLine) bool { return l.span.SpanID() == ospan.SpanContext().SpanID() })},
		{`service.name:="vl-eval"`, where(func(l vlLine) bool { return l.service == "vl-eval" })},
		{`_stream:{service.name="vl-trainer"}`, where(func(l vlLine) bool { return l.service == "vl-trainer" })},
		{"severity_text:=error", where(func(l vlLine) bool { return l.level == "error" })},
		{"severity_number:>=13", where(func(l vlLine) bool { return l.level == "warn" || l.level == "error" })},
	} {
		vlCheckQuery(t, s, q.query, q.want)
	}
}

// vlCheckQuery fails unless query returns exactly want, each row with
// exactly its fields.
func vlCheckQuery(t *testing.T, s *victorialogs.Server, query string, want []vlLine) {
	t.Helper()
	rows := vlQuery(t, s, query, len(want))
	byMsg := map[string]map[string]string{}
	for _, r := range rows {
		byMsg[r["_msg"]] = r
	}
	var wantMsgs []string
	for _, l := range want {
		wantMsgs = append(wantMsgs, l.msg)
	}
	if got := slices.Sorted(maps.Keys(byMsg)); len(rows) != len(want) || !slices.Equal(got, slices.Sorted(slices.Values(wantMsgs))) {
		vlDump(t, rows)
		t.Errorf("%s: %d rows %q, want %q", query, len(rows), got, wantMsgs)
		return
	}
	for _, l := range want {
		vlCheckRow(t, query, byMsg[l.msg], l)
	}
}

// vlCheckRow compares one stored row with the line it should be.
func vlCheckRow(t *testing.T, query string, row map[string]string, l vlLine) {
	t.Helper()
	var traceID, spanID string
	if l.span.IsValid() {
		traceID, spanID = l.span.TraceID().String(), l.span.SpanID().String()
	}
	for k, v := range map[string]string{
		"service.name": l.service, "scope.name": l.scope, "severity_text": l.level, "severity_number": l.severity,
		"trace_id": traceID, "span_id": spanID, "_stream": `{service.name="` + l.service + `"}`,
	} {
		if row[k] != v {
			t.Errorf("%s: %q: %s = %q, want %q", query, l.msg, k, row[k], v)
		}
	}
	if row["code.line.number"] == "" || !strings.HasSuffix(row["code.file.path"], "_test.go") {
		t.Errorf("%s: %q: no caller: %v", query, l.msg, row)
	}
	fields := map[string]string{}
	for k, v := range row {
		if !vlContextField(k) {
			fields[k] = v
		}
	}
	if !maps.Equal(fields, l.fields) {
		t.Errorf("%s: %q: fields\n%v\nwant\n%v", query, l.msg, fields, l.fields)
	}
}

// vlContextField tells the fields VictoriaLogs or the resource adds to
// every row from the fields the line itself carries.
func vlContextField(k string) bool {
	switch k {
	case "trace_id", "span_id", "severity_text", "severity_number":
		return true
	}
	for _, p := range []string{"_", "code.", "scope.", "service.", "host.", "os.", "process.", "telemetry."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// vlEveryKind is one field of every kind in the README's field table.
func vlEveryKind() []zap.Field {
	return []zap.Field{
		zap.Int("int", -7), zap.Int8("int8", -8), zap.Uint32("uint32", 32), zap.Uintptr("uintptr", 0xff),
		zap.Uint64("uint64", 64), zap.Uint64("uint64_big", math.MaxUint64),
		zap.Float64("float64", 0.25), zap.Float32("float32", 0.1), zap.Complex128("complex", complex(1, -2)),
		zap.Bool("bool", true), zap.String("string", "s"), zap.ByteString("bytestring", []byte("bs")),
		zap.Stringer("stringer", vlStringer{}), zap.Binary("binary", []byte{0, 1, 2, 0xff}),
		zap.Duration("duration", 1500*time.Millisecond),
		zap.Time("time", time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("CET", 3600))),
		zap.Object("object", vlObj{"x", 2}), zap.Ints("ints", []int{1, 2, 3}), zap.Strings("strings", []string{"a", "b"}),
		zap.Objects("objects", []vlObj{{"y", 3}}), zap.Inline(vlInline{}),
		zap.Reflect("reflect", map[string]any{"a": []int{1, 2}, "b": 2.0}), zap.Any("any", struct{ X int }{3}),
		zap.Skip(), zap.NamedError("cause", errors.New("disk full")), zap.Error(errors.New("nan loss")),
	}
}

// vlEveryKindStored is vlEveryKind as VictoriaLogs stores it.
var vlEveryKindStored = map[string]string{
	"int": "-7", "int8": "-8", "uint32": "32", "uintptr": "255",
	"uint64": "64", "uint64_big": "18446744073709551615", // a string: exact, never a float
	"float64": "0.25", "float32": "0.1", "complex": "(1-2i)",
	"bool": "true", "string": "s", "bytestring": "bs",
	"stringer": "stringer!", "binary": "AAEC/w==", // bytes, base64
	"duration":    "1500000000", // int nanoseconds
	"time":        "2026-01-02T03:04:05.000000006+01:00",
	"object.name": "x", "object.n": "2", // a map: flattened
	"ints": "[1,2,3]", "strings": `["a","b"]`, // a slice: its JSON
	"objects": `[{"n":3,"name":"y"}]`, "inlined": "yes",
	"reflect.a": "[1,2]", "reflect.b": "2", // a whole float: a double, which VictoriaLogs prints as 2
	"any.X": "3",
	"cause": "disk full", "exception.message": "nan loss", "exception.type": "*errors.errorString",
}

type vlObj struct {
	name string
	n    int
}

func (o vlObj) MarshalLogObject(e zapcore.ObjectEncoder) error {
	e.AddString("name", o.name)
	e.AddInt("n", o.n)
	return nil
}

type vlInline struct{}

func (vlInline) MarshalLogObject(e zapcore.ObjectEncoder) error {
	e.AddString("inlined", "yes")
	return nil
}

type vlStringer struct{}

func (vlStringer) String() string { return "stringer!" }
