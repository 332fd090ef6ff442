package benchmarks

import (
	"context"
	"testing"

	"github.com/zaplens/zaplens"
	"go.uber.org/zap/zapcore"
)

func init() {
	busyBridges = append(busyBridges, busyBridge{
		// zaplens with its pipeline's defaults (zaplens.NewLoggerProvider),
		// told only where the receiver is.
		name: "zaplens",
		start: func(tb testing.TB, addr string) busyPipeline {
			p, err := zaplens.NewLoggerProvider(context.Background(),
				zaplens.WithEndpoint("http://"+addr), zaplens.WithInsecure())
			if err != nil {
				tb.Fatal(err)
			}
			return busyPipeline{
				core: func(base zapcore.Core) zapcore.Core {
					return zaplens.NewTee(base, zaplens.WithLoggerProvider(p))
				},
				ctx:      zaplens.Context,
				shutdown: p.Shutdown,
				counted: func() (int64, bool) {
					// After Shutdown, Queued is what it had no time to send.
					st := p.Stats()
					return int64(st.Lost() + st.Queued), true
				},
			}
		},
	})
}
