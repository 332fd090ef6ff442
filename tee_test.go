package zaplens

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestTeeQuickStart(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.DebugLevel)
	ctx, sc := spanContext(t)
	logger := zap.New(base.core).WithOptions(WrapCore(WithLoggerProvider(c.lp)))

	logger.Info("step done", Context(ctx), zap.Int("step", 12), zap.Float64("loss", 0.41))

	lines := base.lines(t)
	if len(lines) != 1 {
		t.Fatalf("base wrote %d lines, want 1", len(lines))
	}
	want := map[string]any{"level": "info", "msg": "step done", "step": 12.0, "loss": 0.41,
		"trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String()}
	if len(lines[0]) != len(want) {
		t.Errorf("base line %v, want exactly %v", lines[0], want)
	}
	for k, v := range want {
		if lines[0][k] != v {
			t.Errorf("base %s = %v, want %v", k, lines[0][k], v)
		}
	}

	r := c.only(t)
	if r.Body().AsString() != "step done" || r.Severity() != 9 || r.SeverityText() != "info" {
		t.Errorf("record body %q severity %v %q", r.Body().AsString(), r.Severity(), r.SeverityText())
	}
	if r.TraceID() != sc.TraceID() || r.SpanID() != sc.SpanID() {
		t.Errorf("record ids %v/%v, want %v/%v", r.TraceID(), r.SpanID(), sc.TraceID(), sc.SpanID())
	}
	a := attrs(r)
	if a["step"].AsInt64() != 12 || a["loss"].AsFloat64() != 0.41 || len(a) != 2 {
		t.Errorf("record attributes %v", a)
	}
}

// The official bridge's users pass zap.Any("ctx", ctx); it must neither print
// as junk nor lose the correlation.
func TestTeeTakesContextPassedAsAny(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp)))

	logger.Info("m", zap.Any("ctx", ctx))

	line := base.lines(t)[0]
	if _, ok := line["ctx"]; ok {
		t.Errorf("base printed the context: %v", line)
	}
	if line["trace_id"] != sc.TraceID().String() {
		t.Errorf("base trace_id %v", line["trace_id"])
	}
	r := c.only(t)
	if r.TraceID() != sc.TraceID() || len(attrs(r)) != 0 {
		t.Errorf("record trace %v attributes %v", r.TraceID(), attrs(r))
	}
}

func TestTeeWithContextAndPerCallWins(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	ctxA, scA := spanContext(t)
	ctxB, scB := spanContext(t)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp))).With(Context(ctxA), zap.String("job", "j"))

	logger.Info("inherits")
	logger.Info("overrides", Context(ctxB))
	logger.Info("no span", Context(context.Background()))

	lines := base.lines(t)
	recs := c.records()
	wantTrace := []string{scA.TraceID().String(), scB.TraceID().String(), ""}
	for i, want := range wantTrace {
		got, _ := lines[i]["trace_id"].(string)
		if got != want {
			t.Errorf("line %d trace_id %q, want %q", i, got, want)
		}
		if lines[i]["job"] != "j" {
			t.Errorf("line %d lost the With field: %v", i, lines[i])
		}
		gotRec := recs[i].TraceID().String()
		if want == "" && gotRec != strings.Repeat("0", 32) || want != "" && gotRec != want {
			t.Errorf("record %d trace %v, want %q", i, recs[i].TraceID(), want)
		}
	}
	if recs[1].SpanID() != scB.SpanID() {
		t.Errorf("per-call span %v, want %v", recs[1].SpanID(), scB.SpanID())
	}
	if strings.Contains(base.buf.String(), contextKey) {
		t.Errorf("base printed the context key")
	}
}

func TestTeeTraceKeys(t *testing.T) {
	ctx, sc := spanContext(t)
	for _, tc := range []struct {
		name, traceKey, spanKey string
	}{
		{"renamed", "trace.id", "span.id"},
		{"off", "", ""},
		{"trace only", "tid", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(t)
			base := newJSONBase(zapcore.InfoLevel)
			zap.New(NewTee(base.core, WithLoggerProvider(c.lp), WithTraceKeys(tc.traceKey, tc.spanKey))).
				Info("m", Context(ctx))
			line := base.lines(t)[0]
			wantLen := 2
			if tc.traceKey != "" {
				wantLen++
				if line[tc.traceKey] != sc.TraceID().String() {
					t.Errorf("%s = %v", tc.traceKey, line[tc.traceKey])
				}
			}
			if tc.spanKey != "" {
				wantLen++
				if line[tc.spanKey] != sc.SpanID().String() {
					t.Errorf("%s = %v", tc.spanKey, line[tc.spanKey])
				}
			}
			if len(line) != wantLen {
				t.Errorf("line %v has %d keys, want %d", line, len(line), wantLen)
			}
			if r := c.only(t); r.TraceID() != sc.TraceID() {
				t.Errorf("the record lost its trace with the keys %q %q", tc.traceKey, tc.spanKey)
			}
		})
	}
}

// Base keeps its own level and gets what the bridge filters out.
func TestTeeBaseGetsFilteredEntries(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.DebugLevel)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp), WithLoggerName("megatron.training")))

	logger.Debug("debug")
	logger.Named("other").Info("other")
	logger.Named("megatron.training").Info("bridged")

	if n := len(base.lines(t)); n != 3 {
		t.Errorf("base wrote %d lines, want 3", n)
	}
	if r := c.only(t); r.Body().AsString() != "bridged" {
		t.Errorf("bridged %q", r.Body().AsString())
	}
}

// Base's own Check still decides: a sampler drops what it drops, the bridge
// is unaffected.
func TestTeeKeepsBaseSampling(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	sampled := zapcore.NewSamplerWithOptions(base.core, 1e12, 2, 0)
	logger := zap.New(NewTee(sampled, WithLoggerProvider(c.lp)))
	for range 5 {
		logger.Info("same")
	}
	if n := len(base.lines(t)); n != 2 {
		t.Errorf("sampled base wrote %d lines, want 2", n)
	}
	if n := len(c.records()); n != 5 {
		t.Errorf("bridge got %d records, want 5", n)
	}
}

// With no provider configured the global one, a no-op until set, is used:
// the tee is base plus trace ids.
func TestTeeWithoutProvider(t *testing.T) {
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	zap.New(NewTee(base.core)).Info("m", Context(ctx), zap.Int("n", 1))
	line := base.lines(t)[0]
	if line["trace_id"] != sc.TraceID().String() || line["n"] != 1.0 {
		t.Errorf("line %v", line)
	}
}

func TestTeeNilBase(t *testing.T) {
	c := newCapture(t)
	zap.New(NewTee(nil, WithLoggerProvider(c.lp))).Info("m")
	c.only(t)
}

// A core that calls Write without Check still writes both sides.
func TestTeeWriteWithoutCheck(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	core := NewTee(base.core, WithLoggerProvider(c.lp))
	if err := core.Write(zapcore.Entry{Message: "direct"}, []zapcore.Field{Context(ctx)}); err != nil {
		t.Fatal(err)
	}
	r := c.only(t)
	if base.lines(t)[0]["trace_id"] != sc.TraceID().String() || r.TraceID() != sc.TraceID() {
		t.Errorf("direct Write lost the correlation")
	}
}

func TestTeeLevel(t *testing.T) {
	base := newJSONBase(zapcore.WarnLevel)
	core := NewTee(base.core, WithLevel(zapcore.InfoLevel))
	if got := zapcore.LevelOf(core); got != zapcore.InfoLevel {
		t.Errorf("LevelOf = %v, want info", got)
	}
	if core.Enabled(zapcore.DebugLevel) || !core.Enabled(zapcore.InfoLevel) {
		t.Errorf("Enabled disagrees with the two sides")
	}
}

// zap fills in the caller and the stack after Check; base must print them.
func TestTeeBaseGetsCallerAndStack(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp)), zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel))
	logger.Error("with stack")
	line := base.lines(t)[0]
	caller, _ := line["caller"].(string)
	stack, _ := line["stacktrace"].(string)
	if !strings.Contains(caller, "tee_test.go") || !strings.Contains(stack, "TestTeeBaseGetsCallerAndStack") {
		t.Errorf("base line lost caller or stack: %v", line)
	}
}

// A logger wrapped twice, directly or with other wrappers between: both
// bridges see the context, base prints the ids once.
func TestTeeWrappedTwice(t *testing.T) {
	for name, between := range map[string]zap.Option{
		"directly":      zap.Fields(),
		"hooks":         zap.Hooks(func(zapcore.Entry) error { return nil }),
		"sampler":       zap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapcore.NewSamplerWithOptions(c, time.Second, 100, 100) }),
		"IncreaseLevel": zap.IncreaseLevel(zapcore.InfoLevel),
	} {
		t.Run(name, func(t *testing.T) { testWrappedTwice(t, between) })
	}
}

func testWrappedTwice(t *testing.T, between zap.Option) {
	inner, outer := newCapture(t), newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	logger := zap.New(base.core).
		WithOptions(WrapCore(WithLoggerProvider(inner.lp))).
		WithOptions(between).
		WithOptions(WrapCore(WithLoggerProvider(outer.lp)))
	logger.Info("per call", Context(ctx))
	logger.With(Context(ctx)).Info("from With")

	for name, c := range map[string]*capture{"inner": inner, "outer": outer} {
		recs := c.records()
		if len(recs) != 2 {
			t.Fatalf("%s bridge got %d records, want 2", name, len(recs))
		}
		for i, r := range recs {
			if r.TraceID() != sc.TraceID() {
				t.Errorf("%s record %d trace %v, want %v", name, i, r.TraceID(), sc.TraceID())
			}
		}
	}
	out := base.buf.String()
	if n := strings.Count(out, `"trace_id"`); n != 2 {
		t.Errorf("base printed trace_id %d times in two lines:\n%s", n, out)
	}
}

// A context whose Value panics, such as a nil *gin.Context passed as
// zap.Any, loses its correlation, not the entry.
func TestTeePanickingContext(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp)))
	var nilCtx *embeddedCtx
	logger.Info("per call", zap.Any("ctx", nilCtx))
	logger.With(zap.Any("ctx", nilCtx)).Info("from With")
	if n := len(base.lines(t)); n != 2 {
		t.Errorf("base wrote %d lines, want 2", n)
	}
	if n := len(c.records()); n != 2 {
		t.Errorf("bridge got %d records, want 2", n)
	}
}

type embeddedCtx struct{ context.Context }

// A later With whose context cannot be read replaces the earlier one on
// both sides: its entries carry no trace rather than an older request's.
func TestTeeUnreadableContextReplacesEarlier(t *testing.T) {
	c := newCapture(t)
	base := newJSONBase(zapcore.InfoLevel)
	ctx, _ := spanContext(t)
	var nilCtx *embeddedCtx
	zap.New(NewTee(base.core, WithLoggerProvider(c.lp))).With(Context(ctx)).With(zap.Any("ctx", nilCtx)).Info("later request")
	if line := base.lines(t)[0]; line["trace_id"] != nil {
		t.Errorf("base printed the earlier trace: %v", line)
	}
	if r := c.only(t); r.TraceID().IsValid() {
		t.Errorf("bridged with the earlier trace %v", r.TraceID())
	}
}

// The ids go first, so that a namespace among the call's fields does not
// swallow them.
func TestTeeIdsBeforeNamespace(t *testing.T) {
	base := newJSONBase(zapcore.InfoLevel)
	ctx, sc := spanContext(t)
	zap.New(NewTee(base.core)).Info("m", zap.Namespace("req"), zap.Int("a", 1), Context(ctx))
	line := base.lines(t)[0]
	if line["trace_id"] != sc.TraceID().String() {
		t.Errorf("trace_id not at the top level: %v", line)
	}
}

// logger.With(zaplens.Context(ctx)) per request must not make base copy its
// encoder for a field it never prints.
func TestTeeWithContextOnlyLeavesBase(t *testing.T) {
	base := newJSONBase(zapcore.InfoLevel)
	ctx, _ := spanContext(t)
	core := NewTee(base.core)
	if got := core.With([]zapcore.Field{Context(ctx)}).(*tee).base; got != base.core {
		t.Errorf("base was re-made for a context-only With")
	}
}

// failingSyncer refuses every write.
type failingSyncer struct{}

func (failingSyncer) Write([]byte) (int, error) { return 0, errors.New("disk full") }
func (failingSyncer) Sync() error               { return nil }

// A base that fails to write is told on zap's error output as zap tells
// it, whether the tee writes base with its checked entry (a sampler) or
// without (a plain core); its level holds either way, and the bridge
// still gets every entry.
func TestTeeBaseWriteErrorTold(t *testing.T) {
	plain := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), failingSyncer{}, zapcore.WarnLevel)
	for _, base := range []zapcore.Core{plain, zapcore.NewSamplerWithOptions(plain, time.Hour, 100, 0)} {
		c := newCapture(t)
		var out bytes.Buffer
		old := baseErrorOutput
		baseErrorOutput = zapcore.AddSync(&out)
		logger := zap.New(NewTee(base, WithLoggerProvider(c.lp)))
		logger.Info("below base's level")
		logger.Warn("refused")
		baseErrorOutput = old
		if got := strings.Count(out.String(), "write error: disk full"); got != 1 {
			t.Errorf("%T: error output %q, want one write error", base, out.String())
		}
		if n := len(c.records()); n != 2 {
			t.Errorf("%T: bridge got %d records, want 2", base, n)
		}
	}
}
