package otlplog_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

// A program sets the pipeline up in one call and bridges its logger to it.
// Here the records go to the console exporter, as with
// OTEL_LOGS_EXPORTER=console, written to io.Discard so that the example
// runs without a collector; without options, they would go over OTLP/gRPC to
// the endpoint of OTEL_EXPORTER_OTLP_ENDPOINT.
func ExampleNewLoggerProvider() {
	ctx := context.Background()
	provider, err := otlplog.NewLoggerProvider(ctx,
		otlplog.WithExporterName("console"),
		otlplog.WithConsoleWriter(io.Discard),
		otlplog.WithServiceName("trainer"),
	)
	if err != nil {
		fmt.Println(err) // provider is a no-op: logging goes on, unbridged
	}
	defer provider.Shutdown(ctx)

	logger := zap.New(zaplens.NewTee(zapcore.NewNopCore(), zaplens.WithLoggerProvider(provider)))
	logger.Info("step done", zap.Int("step", 1), zap.Float64("loss", 0.41))
	logger.Warn("loss spiked", zap.Int("step", 2), zap.Float64("loss", 9.5))
	_ = logger.Sync() // flushes the provider

	fmt.Println(provider.Stats())
	// Output: emitted 2, exported 2, dropped 0, failed 0, queued 0
}

// A configuration that makes shipping impossible never panics and never
// gives a nil provider: the error names the setting, and Shutdown returns
// it again, with what it cost.
func ExampleNewLoggerProvider_badConfig() {
	ctx := context.Background()
	provider, err := otlplog.NewLoggerProvider(ctx, otlplog.WithEndpoint("grpc://collector:4317"))
	fmt.Println(err)
	fmt.Println(provider.Shutdown(ctx))
	// Output:
	// zaplens: no log records will be shipped: WithEndpoint: endpoint "grpc://collector:4317": scheme "grpc", want http, https or none
	// zaplens: no log records were shipped (0 dropped): WithEndpoint: endpoint "grpc://collector:4317": scheme "grpc", want http, https or none
}

// The loss report can go to the program's own, unbridged logger instead of
// stderr.
func ExampleWithLossReport() {
	base := zap.NewNop() // the program's logger before bridging
	provider, _ := otlplog.NewLoggerProvider(context.Background(),
		otlplog.WithExporterName("none"),
		otlplog.WithLossReport(30*time.Second, func(l otlplog.Loss) {
			base.Warn("log records lost", zap.Uint64("dropped", l.Dropped), zap.Uint64("failed", l.Failed),
				zap.Stringer("totals", l.Totals), zap.Error(l.Err))
		}),
	)
	defer provider.Shutdown(context.Background())
}

// discardProvider is a provider whose records are written and thrown
// away, so that an example runs without a collector; its Stats say how
// many the bridge handed over.
func discardProvider(opts ...otlplog.Option) *otlplog.LoggerProvider {
	opts = append([]otlplog.Option{otlplog.WithExporterName("console"), otlplog.WithConsoleWriter(io.Discard)}, opts...)
	p, _ := otlplog.NewLoggerProvider(context.Background(), opts...)
	return p
}

// With a spool directory, each record is copied to a file before the
// logging call returns, so that a process killed with SIGKILL loses no
// line: the next process on the directory sends what is left.
func ExampleWithSpool() {
	dir, _ := os.MkdirTemp("", "zaplens-spool")
	defer os.RemoveAll(dir)
	provider := discardProvider(otlplog.WithSpool(dir))
	logger := zap.NewNop().WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider)))
	logger.Info("kept on disk until delivered")

	err := provider.Shutdown(context.Background())
	fmt.Println(err, provider.Stats().Kept)
	// Output: <nil> 0
}
