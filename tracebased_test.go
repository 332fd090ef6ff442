package zaplens

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// bodies returns the body of every record captured, in order.
func bodies(c *capture) []string {
	var out []string
	for _, r := range c.records() {
		out = append(out, r.Body().AsString())
	}
	return out
}

// Below the always level, an unsampled span's entries stay out of the
// bridge; span-less and sampled ones, and everything from the always level
// up, are bridged. Base prints them all.
func TestTraceBased(t *testing.T) {
	sampled, _ := spanContext(t)
	unsampled, unsampledSC := unsampledSpanContext(t)
	c := newCapture(t)
	base := newJSONBase(zapcore.DebugLevel)
	logger := zap.New(NewTee(base.core, WithLoggerProvider(c.lp),
		WithLevel(zapcore.DebugLevel), WithTraceBased(zapcore.WarnLevel)))

	var want []string
	for _, l := range []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel, zapcore.WarnLevel, zapcore.ErrorLevel} {
		name := l.String()
		logger.Log(l, name+" none")
		logger.Log(l, name+" sampled", Context(sampled))
		logger.Log(l, name+" unsampled", Context(unsampled))
		logger.With(Context(unsampled)).Log(l, name+" unsampled from With")
		logger.With(Context(unsampled)).Log(l, name+" sampled over With", Context(sampled))
		want = append(want, name+" none", name+" sampled")
		if l >= zapcore.WarnLevel {
			want = append(want, name+" unsampled", name+" unsampled from With")
		}
		want = append(want, name+" sampled over With")
	}

	if got := bodies(c); !slices.Equal(got, want) {
		t.Errorf("bridged\n%q\nwant\n%q", got, want)
	}
	if n := len(base.lines(t)); n != 20 {
		t.Errorf("base wrote %d lines, want all 20", n)
	}
	for _, r := range c.records() {
		if r.Body().AsString() == "warn unsampled" && (r.TraceID() != unsampledSC.TraceID() || r.TraceFlags().IsSampled()) {
			t.Errorf("an unsampled entry at the always level lost its trace: %v %v", r.TraceID(), r.TraceFlags())
		}
	}
}

// WithTraceBased(Off) exempts no level; the bare core, given the context
// the official bridge's way, applies it too.
func TestTraceBasedOff(t *testing.T) {
	sampled, _ := spanContext(t)
	unsampled, _ := unsampledSpanContext(t)
	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp), WithTraceBased(Off), WithFlushTimeout(0)))

	for _, l := range []zapcore.Level{zapcore.InfoLevel, zapcore.ErrorLevel, zapcore.DPanicLevel} {
		logger.Log(l, l.String()+" unsampled", zap.Any("ctx", unsampled))
		logger.Log(l, l.String()+" sampled", zap.Any("ctx", sampled))
		logger.Log(l, l.String()+" none")
	}
	want := []string{"info sampled", "info none", "error sampled", "error none", "dpanic sampled", "dpanic none"}
	if got := bodies(c); !slices.Equal(got, want) {
		t.Errorf("bridged %q, want %q", got, want)
	}
}

// Without the option, an unsampled span's entries are bridged.
func TestTraceBasedIsOptIn(t *testing.T) {
	unsampled, _ := unsampledSpanContext(t)
	c := newCapture(t)
	zap.New(NewTee(zapcore.NewNopCore(), WithLoggerProvider(c.lp))).Info("m", Context(unsampled))
	c.only(t)
}

// countingProvider's loggers count what reaches Emit.
type countingProvider struct {
	embedded.LoggerProvider
	n *atomic.Int64
}

func (p countingProvider) Logger(string, ...log.LoggerOption) log.Logger {
	return countingLogger{n: p.n}
}

type countingLogger struct {
	embedded.Logger
	n *atomic.Int64
}

func (l countingLogger) Emit(context.Context, log.Record)                  { l.n.Add(1) }
func (countingLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

// A dropped entry costs no allocation, through the tee (base printing it
// with its ids) and through the bare core, and never reaches Emit.
func TestAllocationsTraceBased(t *testing.T) {
	skipAllocsUnderRace(t)
	unsampled, _ := unsampledSpanContext(t)
	fields := fiveFieldsAndContext(unsampled)
	var emitted atomic.Int64
	opts := []Option{WithLoggerProvider(countingProvider{n: &emitted}), WithTraceBased(Off)}
	tee := zap.New(NewTee(jsonDiscard(), append(opts, WithIDFormat(DatadogIDs()))...))
	core := zap.New(NewCore(opts...))
	with := tee.With(Context(unsampled))
	for _, tc := range []struct {
		name string
		log  func()
	}{
		{"tee", func() { tee.Info("i", fields...) }},
		{"tee, context from With", func() { with.Info("i", fields[1:]...) }},
		{"core", func() { core.Info("i", fields...) }},
	} {
		if n := testing.AllocsPerRun(200, tc.log); n != 0 {
			t.Errorf("%s: %v allocations per dropped entry, want 0", tc.name, n)
		}
	}
	if n := emitted.Load(); n != 0 {
		t.Errorf("%d dropped entries reached Emit", n)
	}
}
