package zaplens_test

import (
	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
)

// Datadog's agent tails stdout: the ids go under dd.trace_id and dd.span_id,
// as the decimal of their lower 64 bits, so that Datadog joins each line to
// its trace. The OpenTelemetry record is as it always is.
func ExampleWithIDFormat() {
	logger, provider, ctx := exampleSetup()
	logger = logger.WithOptions(zaplens.WrapCore(
		zaplens.WithLoggerProvider(provider),
		zaplens.WithIDFormat(zaplens.DatadogIDs()),
	))

	logger.Info("step done", zaplens.Context(ctx), zap.Int("step", 12))
	// Output:
	// {"level":"info","msg":"step done","dd.trace_id":"11803532876627986230","dd.span_id":"67667974448284343","step":12}
	// otel: scope=zaplens severity=INFO body="step done" trace=4bf92f3577b34da6a3ce929d0e0e4736 step=12
}
