// Command otelzap-both is the official bridge on sdk/log with a batch
// processor and the exporter OTEL_EXPORTER_OTLP_PROTOCOL names, gRPC or
// HTTP, as zaplens's pipeline does, gRPC unless told (see ../binsize.sh): the official
// pipeline when it offers what ours does.
package main

import (
	"context"
	"os"

	"go.opentelemetry.io/contrib/bridges/otelzap"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
)

func main() {
	ctx := context.Background()
	var exp sdklog.Exporter
	if os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL") == "http/protobuf" {
		exp, _ = otlploghttp.New(ctx)
	} else {
		exp, _ = otlploggrpc.New(ctx)
	}
	p := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
	defer p.Shutdown(ctx)
	logger := zap.New(otelzap.NewCore("binsize", otelzap.WithLoggerProvider(p)))
	logger.Info("hello")
}
