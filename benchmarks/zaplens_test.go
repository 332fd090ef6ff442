package benchmarks

import (
	"go.opentelemetry.io/otel/log"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

func init() {
	contenders = append(contenders, contender{
		// zaplens: NewTee over the same core, the context passed with
		// zaplens.Context.
		name: "zaplens",
		core: func(base zapcore.Core, p log.LoggerProvider, prefixes []string) zapcore.Core {
			return zaplens.NewTee(base,
				zaplens.WithLoggerProvider(p),
				zaplens.WithLoggerName(prefixes...))
		},
		ctx: zaplens.Context,
	})
}
