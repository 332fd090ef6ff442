package zaplens

import (
	"context"
	"testing"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// BenchmarkFeatures is case 1's line through a tee with each bridge
// feature of issue 25 on, against none (off), on a zaplens provider
// (provider=zaplens, an export that discards) and on a provider of the
// user's own (provider=own, which discards each record): what each costs
// when used. span-events logs inside a recording sdk/trace span; redact
// is a zaplens provider made otlplog.WithRedactKeys, whose keys the line does not
// hold: what every line pays for the check.
func BenchmarkFeatures(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	bagCtx := withTestBaggage(b, ctx, "tenant", "acme", "session", "s-42")
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	redacting, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport(), otlplog.WithRedactKeys("password", "token"))
	if err != nil {
		b.Fatal(err)
	}
	defer redacting.Shutdown(context.Background())
	for _, prov := range []struct {
		name string
		p    log.LoggerProvider
	}{{"zaplens", p}, {"own", discardProvider{}}} {
		for _, bc := range []struct {
			name   string
			opts   []Option
			ctx    context.Context
			fields []zap.Field
			// zaplens, when set, replaces zaplens's provider, and the case
			// has no run on the own one, where redaction is its processors'.
			zaplens log.LoggerProvider
		}{
			{"off", nil, ctx, nil, nil},
			{"event-name", nil, ctx, []zap.Field{EventName("train.step")}, nil},
			{"baggage", []Option{WithBaggage()}, bagCtx, nil, nil},
			{"level-for", []Option{WithLevelFor("http", zapcore.WarnLevel), WithLevelFor("megatron", zapcore.DebugLevel)}, ctx, nil, nil},
			{"span-status", []Option{WithSpanStatus(zapcore.InfoLevel)}, ctx, nil, nil}, // every line sets the status
			{"span-events", []Option{WithSpanEvents(zapcore.InfoLevel)}, ctx, nil, nil},
			{"redact", nil, ctx, nil, redacting}, // two keys, neither among the line's
		} {
			fields := append(caseOneFields(bc.ctx), bc.fields...)
			target := prov.p
			if bc.zaplens != nil {
				if prov.name != "zaplens" {
					continue
				}
				target = bc.zaplens
			}
			l := zap.New(NewTee(jsonDiscard(), append([]Option{WithLoggerProvider(target)}, bc.opts...)...)).Named("megatron")
			b.Run("provider="+prov.name+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					l.Info("step done", fields...)
				}
			})
		}
	}
}
