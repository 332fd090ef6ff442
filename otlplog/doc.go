// Package otlplog is zaplens's OpenTelemetry log pipeline: a
// log.LoggerProvider that encodes each record once, straight to OTLP
// protobuf, queues the bytes (spilling to a spool on disk with
// [WithSpool]), and sends them over OTLP/gRPC or OTLP/HTTP, with every
// record counted ([Stats]), losses told ([Loss], [DeliveryError]) and a
// Shutdown that keeps its deadline. It reads the standard OTEL_*
// variables, and the declarative configuration file OTEL_CONFIG_FILE names
// in a program that imports [github.com/zaplens/zaplens/otlplog/configfile].
//
// Any OpenTelemetry logs bridge may emit to it; the zaplens bridge
// (package github.com/zaplens/zaplens) hands it zap entries as OTLP bytes,
// with no log.Record on the way:
//
//	provider, err := otlplog.NewLoggerProvider(ctx)
//	defer provider.Shutdown(ctx)
//	logger = logger.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))
//
// Neither package imports the other: a program that uses only the bridge
// links none of this package's transports.
package otlplog
