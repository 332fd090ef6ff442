// Command pipeline-configfile is ../pipeline with OTEL_CONFIG_FILE
// support linked in (otlplog/configfile), to show what the import costs
// (see ../binsize.sh).
package main

import (
	"context"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/otlplog"
	_ "github.com/zaplens/zaplens/otlplog/configfile"
)

func main() {
	ctx := context.Background()
	p, _ := otlplog.NewLoggerProvider(ctx)
	defer p.Shutdown(ctx)
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	logger.Info("hello")
}
