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
// [log.LoggerProvider]: https://pkg.go.dev/go.opentelemetry.io/otel/log#LoggerProvider
package zaplens
