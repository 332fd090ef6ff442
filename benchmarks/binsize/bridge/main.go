// Command bridge is zaplens's bridge on an sdk/log provider of the
// program's own, with no exporter: what a program that wants only the
// bridge links (see ../binsize.sh).
package main

import (
	"context"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
)

func main() {
	p := sdklog.NewLoggerProvider()
	defer p.Shutdown(context.Background())
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	logger.Info("hello")
}
