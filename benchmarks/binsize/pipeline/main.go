// Command pipeline is zaplens's bridge on zaplens's own provider, which
// exports over OTLP (see ../binsize.sh).
package main

import (
	"context"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
)

func main() {
	ctx := context.Background()
	p, _ := zaplens.NewLoggerProvider(ctx)
	defer p.Shutdown(ctx)
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	logger.Info("hello")
}
