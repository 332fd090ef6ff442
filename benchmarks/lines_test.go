package benchmarks

import (
	"context"
	"testing"

	"go.opentelemetry.io/contrib/bridges/otelzap"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// A contender is one way of logging a line: its core over the user's base
// core, and how it is told the line's context.
type contender struct {
	name string
	// core builds the contender's core over base, bridging to p. prefixes
	// are the logger names a bridge that can filter by name should bridge
	// (none: all).
	core func(base zapcore.Core, p log.LoggerProvider, prefixes []string) zapcore.Core
	// ctx makes the field that carries ctx to the contender.
	ctx func(context.Context) zap.Field
}

// contenders, in the order of the table. zaplens_test.go adds zaplens; the
// SDK floor is not a zap core and is run beside them by runLine.
var contenders = []contender{
	{
		// What the user pays today: no bridge, no context.
		name: "zap",
		core: func(base zapcore.Core, _ log.LoggerProvider, _ []string) zapcore.Core { return base },
		ctx:  func(context.Context) zap.Field { return zap.Skip() },
	},
	{
		// go.opentelemetry.io/contrib/bridges/otelzap, teed with the same
		// core as its docs show, the context passed as they say.
		name: "official",
		core: func(base zapcore.Core, p log.LoggerProvider, _ []string) zapcore.Core {
			return zapcore.NewTee(base, otelzap.NewCore("github.com/zaplens/zaplens/benchmarks",
				otelzap.WithLoggerProvider(p)))
		},
		ctx: func(ctx context.Context) zap.Field { return zap.Any("ctx", ctx) },
	},
}

// A workload is one of the cases 1 to 7.
type workload struct {
	name     string
	prefixes []string                                 // what zaplens bridges (none: all)
	logger   func(l *zap.Logger) *zap.Logger          // named loggers and With fields
	line     func(l *zap.Logger, cf zap.Field, i int) // one line; cf carries the context
	parallel bool                                     // from all cores at once (RunParallel)
	// floor is the scope and the record a bridge would emit for the line,
	// emitted as is by the SDK floor; nil where the least a bridge can do
	// is to emit nothing.
	floor func() (scope string, r log.Record)
}

func plain(l *zap.Logger) *zap.Logger { return l }

func info5(l *zap.Logger, cf zap.Field, i int) {
	l.Info("step done", cf,
		zap.Int("step", i),
		zap.Float64("loss", 0.41),
		zap.Float64("lr", 3e-4),
		zap.Int64("tokens", 524288),
		zap.String("phase", "train"))
}

func floor5() (string, log.Record) {
	return "", floorRecord(log.SeverityInfo, "step done", attrs5(0))
}

var workloads = []workload{
	{
		name:   "1-info-5-fields-ctx",
		logger: plain,
		line:   info5,
		floor:  floor5,
	},
	{
		name:   "2-info-10-fields",
		logger: plain,
		line: func(l *zap.Logger, _ zap.Field, i int) {
			l.Info("step done",
				zap.Int("step", i),
				zap.Float64("loss", 0.41),
				zap.Float64("lr", 3e-4),
				zap.Int64("tokens", 524288),
				zap.String("phase", "train"),
				zap.Float64("grad_norm", 1.25),
				zap.Int("epoch", 3),
				zap.Int("rank", 0),
				zap.Duration("elapsed", 1500_000_000),
				zap.Bool("overflow", false))
		},
		floor: func() (string, log.Record) {
			return "", floorRecord(log.SeverityInfo, "step done", attrs10(0))
		},
	},
	{
		name:     "3-named-with-5-plus-1",
		prefixes: []string{bridgedPrefix},
		logger: func(l *zap.Logger) *zap.Logger {
			return l.Named("megatron").Named("training").With(
				zap.Int("rank", 0),
				zap.Int("world_size", 8),
				zap.String("run", "gpt-1.3b"),
				zap.Int("epoch", 3),
				zap.String("phase", "train"))
		},
		line: func(l *zap.Logger, cf zap.Field, i int) {
			l.Info("step done", cf, zap.Int("step", i))
		},
		floor: func() (string, log.Record) {
			return namedLogger, floorRecord(log.SeverityInfo, "step done", []attribute.KeyValue{
				attribute.Int("rank", 0),
				attribute.Int("world_size", 8),
				attribute.String("run", "gpt-1.3b"),
				attribute.Int("epoch", 3),
				attribute.String("phase", "train"),
				attribute.Int("step", 0),
			})
		},
	},
	{
		name:   "4-debug-below-level",
		logger: plain,
		line: func(l *zap.Logger, cf zap.Field, i int) {
			l.Debug("grad stats", cf,
				zap.Int("step", i),
				zap.Float64("grad_norm", 1.25),
				zap.Float64("grad_max", 7.5),
				zap.Float64("grad_min", -7.5),
				zap.String("phase", "train"))
		},
	},
	{
		name:     "5-logger-outside-prefixes",
		prefixes: []string{bridgedPrefix},
		logger:   func(l *zap.Logger) *zap.Logger { return l.Named(outsideLogger) },
		line:     info5,
	},
	{
		name:   "6-error-with-stack",
		logger: plain,
		line: func(l *zap.Logger, cf zap.Field, i int) {
			l.Error("step failed", cf, zap.Int("step", i), zap.Error(errNaN))
		},
		floor: func() (string, log.Record) {
			return "", floorRecord(log.SeverityError, "step failed", errorAttrs(0))
		},
	},
	{
		name:     "7-case-1-parallel",
		logger:   plain,
		line:     info5,
		parallel: true,
		floor:    floor5,
	},
}

// BenchmarkLine runs every workload with every contender:
// BenchmarkLine/case=N-.../bridge=NAME.
func BenchmarkLine(b *testing.B) {
	for _, w := range workloads {
		b.Run("case="+w.name, func(b *testing.B) {
			for _, c := range contenders {
				b.Run("bridge="+c.name, func(b *testing.B) {
					l := w.logger(newLogger(c.core(newBaseCore(), sharedProvider, w.prefixes)))
					cf := c.ctx(traceCtx)
					run(b, w.parallel, func(i int) { w.line(l, cf, i) })
				})
			}
			if w.floor != nil {
				b.Run("bridge=sdk-floor", func(b *testing.B) {
					scope, r := w.floor()
					if scope == "" {
						scope = "zaplens"
					}
					lg := sharedProvider.Logger(scope)
					run(b, w.parallel, func(int) { lg.Emit(traceCtx, r) })
				})
			}
		})
	}
}

// run runs line b.N times, or from all cores with RunParallel, and reports
// beside the wall time the process's CPU time per line (cpu-ns/op): every
// goroutine's, so the SDK's export goroutine and the GC are in it, and it
// does not grow when other processes take the machine's cores.
func run(b *testing.B, parallel bool, line func(i int)) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				line(i)
			}
		})
	} else {
		i := 0
		for b.Loop() {
			line(i)
			i++
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
