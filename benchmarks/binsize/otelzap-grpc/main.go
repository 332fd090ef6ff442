// Command otelzap-grpc is the official bridge on sdk/log with a batch
// processor and otlploggrpc: the official pipeline (see ../binsize.sh).
package main

import (
	"context"

	"go.opentelemetry.io/contrib/bridges/otelzap"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
)

func main() {
	ctx := context.Background()
	exp, _ := otlploggrpc.New(ctx)
	p := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	defer p.Shutdown(ctx)
	logger := zap.New(otelzap.NewCore("binsize", otelzap.WithLoggerProvider(p)))
	logger.Info("hello")
}
