// Command otelzap is the official bridge on an sdk/log provider of the
// program's own, with no exporter (see ../binsize.sh).
package main

import (
	"context"

	"go.opentelemetry.io/contrib/bridges/otelzap"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
)

func main() {
	p := sdklog.NewLoggerProvider()
	defer p.Shutdown(context.Background())
	logger := zap.New(otelzap.NewCore("binsize", otelzap.WithLoggerProvider(p)))
	logger.Info("hello")
}
