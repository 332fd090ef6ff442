package zaplens

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// What issue 25's bridge features add to an entry's allocations: nothing
// for an event name, a level per logger, named baggage members, or every
// member of a With context's baggage (at most five attributes, so that
// log.Record needs no more room than it has).
func TestFeatureAllocations(t *testing.T) {
	skipAllocsUnderRace(t)
	ctx, _ := spanContext(t)
	bagCtx := withTestBaggage(t, ctx, "tenant", "acme", "session", "s-42")
	fields := func(more ...zap.Field) []zap.Field {
		return append([]zap.Field{zap.Int("step", 1), zap.Float64("loss", 0.5), zap.String("phase", "train"), zap.Bool("ok", true)}, more...)
	}
	withEvent, withCtx, withBag := fields(Context(ctx), EventName("train.step")), fields(Context(ctx)), fields(Context(bagCtx))
	levels := zap.New(NewCore(WithLoggerProvider(discardProvider{}), WithLevel(zapcore.WarnLevel),
		WithLevelFor("megatron", zapcore.DebugLevel), WithLevelFor("http", zapcore.ErrorLevel)))
	training, http := levels.Named("megatron").Named("training"), levels.Named("http")
	bag := zap.New(NewCore(WithLoggerProvider(discardProvider{}), WithBaggage("tenant")))
	plain := zap.New(NewCore(WithLoggerProvider(discardProvider{})))
	// Every member of a With context's baggage: read once, with the logger.
	allOfWith := zap.New(NewCore(WithLoggerProvider(discardProvider{}), WithBaggage())).With(Context(bagCtx))
	onlyFields := fields()[:3] // and two members: five attributes, what log.Record holds without growing
	for _, tc := range []struct {
		name string
		log  func()
	}{
		{"an event name", func() { plain.Info("i", withEvent...) }},
		{"a level per logger", func() { training.Debug("d", withCtx...) }},
		{"below a logger's level", func() { http.Warn("w", withCtx...) }},
		{"a named baggage member", func() { bag.Info("i", withBag...) }},
		{"every member of a With context's baggage", func() { allOfWith.Info("i", onlyFields...) }},
	} {
		if n := testing.AllocsPerRun(200, tc.log); n != 0 {
			t.Errorf("%s: %v allocations per entry, want 0", tc.name, n)
		}
	}
}
