// Package zaplens bridges go.uber.org/zap to OpenTelemetry logs.
//
// A zaplens core tees into the core a program already logs with, so its
// stdout or file logs keep working and gain trace_id and span_id, and sends
// every entry that passes its own level and logger-name filters to an
// OpenTelemetry [log.LoggerProvider], correlated with the trace and span of
// the context carried by [Context].
//
//	logger = logger.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))
//	logger.Info("step done", zaplens.Context(ctx), zap.Int("step", 12))
//
// The provider may be any: the OpenTelemetry SDK's, the global one, or
// zaplens's own pipeline, package [github.com/zaplens/zaplens/otlplog],
// which the bridge writes OTLP bytes to directly. This package links no
// exporter, transport or gRPC: a program pays for the pipeline only when
// it imports it.
//
// [log.LoggerProvider]: https://pkg.go.dev/go.opentelemetry.io/otel/log#LoggerProvider
package zaplens
