package zaplens

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// choosyProcessor is an SDK processor whose Enabled refuses Debug, the
// scope "quiet", the event "noisy" and a context marked so: what a minsev
// processor or a filter of one's own decides.
type choosyProcessor struct{ sdklog.Processor }

type choosyKey struct{}

func (choosyProcessor) Enabled(ctx context.Context, p sdklog.EnabledParameters) bool {
	return p.Severity > log.SeverityDebug && p.InstrumentationScope.Name != "quiet" &&
		p.EventName != "noisy" && ctx.Value(choosyKey{}) == nil
}

// Where the bridge is the whole core, Check asks the provider, as the
// official bridge does, with the entry's scope, severity, and With's event
// name and context: a caller's Check comes back nil and nothing is
// converted. The base core of a tee keeps its own decision.
func TestCheckAsksTheProvider(t *testing.T) {
	c := newCapture(t)
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(choosyProcessor{sdklog.NewSimpleProcessor(c)}))
	t.Cleanup(func() { _ = lp.Shutdown(context.Background()) })
	logger := zap.New(NewCore(WithLoggerProvider(lp), WithLevel(zapcore.DebugLevel)))
	marked := context.WithValue(context.Background(), choosyKey{}, true)
	for name, l := range map[string]*zap.Logger{
		"debug":          logger,
		"quiet scope":    logger.Named("quiet"),
		"noisy event":    logger.With(EventName("noisy")),
		"marked context": logger.With(Context(marked)),
	} {
		lvl := zapcore.InfoLevel
		if name == "debug" {
			lvl = zapcore.DebugLevel
		}
		if ce := l.Check(lvl, "m"); ce != nil {
			t.Errorf("%s: Check took an entry the provider refuses", name)
		}
	}
	if ce := logger.Named("loud").Check(zapcore.InfoLevel, "m"); ce == nil {
		t.Fatal("Check refused an entry the provider takes")
	} else {
		ce.Write()
	}
	if n := len(c.records()); n != 1 {
		t.Errorf("%d records, want 1", n)
	}

	base, seen := observer.New(zapcore.DebugLevel)
	zap.New(zapcore.NewTee(base, NewCore(WithLoggerProvider(lp), WithLevel(zapcore.DebugLevel)))).Debug("base's")
	zap.New(NewTee(base, WithLoggerProvider(lp), WithLevel(zapcore.DebugLevel))).Debug("base's")
	if seen.Len() != 2 || len(c.records()) != 1 {
		t.Errorf("base wrote %d entries, want 2; provider got %d records, want 1", seen.Len(), len(c.records()))
	}
}
