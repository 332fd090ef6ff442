// Command pipeline is zaplens's bridge on zaplens's own provider, which
// exports over OTLP (see ../binsize.sh).
package main

import (
	"context"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/otlplog"
)

func main() {
	ctx := context.Background()
	p, _ := otlplog.NewLoggerProvider(ctx)
	defer p.Shutdown(ctx)
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	logger.Info("hello")
}
