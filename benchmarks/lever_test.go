package benchmarks

import (
	"testing"

	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

// dedupFreeProvider is the shared provider's twin with the SDK's key
// de-duplication turned off (sdklog.WithAllowKeyDuplication).
var dedupFreeProvider, _ = newCountingProvider(sdklog.WithAllowKeyDuplication())

// A lever is a setting a user can change to pay less for case 1.
type lever struct {
	name     string
	provider log.LoggerProvider
	opts     []zaplens.Option // added to the zaplens contender's
	floor    bool             // run the SDK floor on provider too
	named    string           // the logger's name, if named
}

var levers = []lever{
	{name: "none", provider: sharedProvider, floor: true},
	// Case 1's very line from the logger of case 3, without its With fields:
	// what a logger name costs by itself (case 3 also has six attributes,
	// one more than the OTel record holds without allocating).
	{name: "named-logger", provider: sharedProvider, floor: true, named: namedLogger},
	{name: "allow-key-duplication", provider: dedupFreeProvider, floor: true},
	// A rank of a RankLevel([]int{0}, Info, Warn) policy other than rank 0:
	// its Info lines stay in its own log and are not bridged.
	{name: "rank-at-warn", provider: sharedProvider, opts: []zaplens.Option{zaplens.WithLevel(zapcore.WarnLevel)}},
	// No trace ids added to the base core's output.
	{name: "no-trace-keys", provider: sharedProvider, opts: []zaplens.Option{zaplens.WithTraceKeys("", "")}},
}

// BenchmarkLever runs case 1 with the settings a user can turn:
// BenchmarkLever/lever=NAME/bridge=NAME. The official bridge has none of
// zaplens's own settings and runs only where the provider changes.
func BenchmarkLever(b *testing.B) {
	for _, lv := range levers {
		b.Run("lever="+lv.name, func(b *testing.B) {
			for _, c := range contenders {
				if c.name == "official" && lv.opts != nil {
					continue
				}
				b.Run("bridge="+c.name, func(b *testing.B) {
					core := c.core(newBaseCore(), lv.provider, nil)
					if c.name == "zaplens" {
						core = zaplens.NewTee(newBaseCore(), append([]zaplens.Option{zaplens.WithLoggerProvider(lv.provider)}, lv.opts...)...)
					}
					l := newLogger(core)
					if lv.named != "" {
						l = l.Named(lv.named)
					}
					cf := c.ctx(traceCtx)
					run(b, false, func(i int) { info5(l, cf, i) })
				})
			}
			if lv.floor {
				b.Run("bridge=sdk-floor", func(b *testing.B) {
					_, r := floor5()
					scope := "zaplens"
					if lv.named != "" {
						scope = lv.named
					}
					lg := lv.provider.Logger(scope)
					run(b, false, func(int) { lg.Emit(traceCtx, r) })
				})
			}
		})
	}
}
