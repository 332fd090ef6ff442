// Command example is a simulated training loop logged with zap through
// zaplens: every step is a span, the loggers trainer.data, trainer.optim and
// trainer.checkpoint write at several levels, and each line goes both to the
// program's ordinary JSON log on stdout (now with trace_id and span_id) and,
// as an OpenTelemetry log record correlated with its span, to an OTLP
// backend. The Debug lines go to the backend only for the step that fails:
// the bridge holds them in their trace (zaplens.WithHold) and ships them
// when that trace logs an error.
//
//	go run ./example
//
// With OTEL_EXPORTER_OTLP_ENDPOINT unset it starts an embedded OTLP/gRPC
// receiver on 127.0.0.1 and, at the end, prints what that backend received
// grouped by trace: each span with its log lines under it. With the
// variable set (and the other OTEL_* variables as usual), logs and spans go
// to that collector instead.
//
//	go run ./example -victorialogs
//
// sends the logs to VictoriaLogs, a real log database, instead: see
// victorialogs.go.
//
//	go run ./example -tier
//
// starts a collector tier on this machine, three Collector replicas under
// one name and a VictoriaLogs cluster, and a few services that log to it:
// see tier.go. Both keep what they started running until Ctrl-C; -exit
// stops it once they have printed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/holdspan"
	"github.com/zaplens/zaplens/internal/victorialogs"
	"github.com/zaplens/zaplens/otlplog"
)

func main() {
	vl := flag.Bool("victorialogs", false, "send the logs to VictoriaLogs, a log database started here on 127.0.0.1 "+
		"(built from Go modules on first use), print each trace's LogsQL query and the link to its lines in "+
		"VictoriaLogs's web UI, and keep it running until Ctrl-C")
	tierMode := flag.Bool("tier", false, "start a collector tier here: three gateway replicas of the Collector built from "+
		"deploy/ (on first use, minutes) on 127.0.0.2-4 under one name, a VictoriaLogs cluster, and a few services "+
		"that log to that name; print each replica's share, the web UI's link and a trace's LogsQL query, and keep "+
		"it running until Ctrl-C")
	exit := flag.Bool("exit", false, "with -victorialogs or -tier: exit after printing, stopping what was started")
	flag.Parse()
	ctx := context.Background()
	var err error
	switch {
	case *tierMode:
		err = runTier(ctx, os.Stdout, os.Stderr, func(ctx context.Context, tr *tierRun) error {
			if *exit {
				return nil
			}
			return untilInterrupt(ctx, "The tier", tr.processes()...)
		})
	case *vl:
		err = runVictoriaLogs(ctx, os.Stdout, os.Stderr, func(ctx context.Context, srv *victorialogs.Server) error {
			if *exit {
				return nil
			}
			return untilInterrupt(ctx, "VictoriaLogs", named{"VictoriaLogs", srv})
		})
	default:
		err = run(ctx, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

// steps is how many training steps the example simulates; the last one
// fails: its checkpoint's upload does.
const steps = 4

// run runs the example, writing the JSON log and then the backend's view to
// stdout.
func run(ctx context.Context, stdout io.Writer) error {
	// Where to send: the collector named by the environment, or an
	// embedded backend.
	var (
		be    *backend
		popts []otlplog.Option
		topts []otlptracegrpc.Option
	)
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		var err error
		if be, err = startBackend(); err != nil {
			return fmt.Errorf("start embedded backend: %w", err)
		}
		defer be.Stop()
		popts = append(popts, otlplog.WithEndpoint("http://"+be.Addr()))
		topts = append(topts, otlptracegrpc.WithEndpoint(be.Addr()), otlptracegrpc.WithInsecure())
	}
	if os.Getenv("OTEL_SERVICE_NAME") == "" {
		popts = append(popts, otlplog.WithServiceName("zaplens-example"))
	}

	// Logs: zaplens's OTLP/gRPC logger provider.
	// On bad configuration it says so and returns a working no-op
	// provider: the program goes on logging to stdout.
	lp, err := otlplog.NewLoggerProvider(ctx, popts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
	}
	// Spans: the OTel SDK, exported over OTLP/gRPC to the same place.
	texp, err := otlptracegrpc.New(ctx, topts...)
	if err != nil {
		return err
	}
	tp := newTracerProvider(sdktrace.WithBatcher(texp))

	_, err = simulate(ctx, stdout, lp, tp)
	if be == nil {
		fmt.Fprintf(stdout, "\nsent to the collector at $OTEL_EXPORTER_OTLP_ENDPOINT: %s\n", lp.Stats())
		return err
	}
	fmt.Fprintf(stdout, "\nembedded OTLP backend on %s (set OTEL_EXPORTER_OTLP_ENDPOINT to ship to your own collector)\n", be.Addr())
	be.Report(stdout)
	return err
}

// newTracerProvider is the example's TracerProvider: its resource, the
// hold's span processor, and opts.
func newTracerProvider(opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(append(opts,
		sdktrace.WithResource(exampleResource()),
		// A trace's held Debug lines ship if one of its spans ends with an
		// error, and are freed when its root span ends well.
		sdktrace.WithSpanProcessor(holdspan.New()))...)
}

// exampleResource is the resource of the example's spans: the SDK's
// defaults and the service name its logs carry.
func exampleResource() *resource.Resource {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(serviceName()))
	if err != nil {
		// Only schema URLs that conflict make Merge fail; NewSchemaless has none.
		return resource.Default()
	}
	return res
}

// simulate logs the training run through lp, with spans from tp, then
// flushes and shuts both down. It returns the trace of each step, in order.
func simulate(ctx context.Context, stdout io.Writer, lp *otlplog.LoggerProvider, tp *sdktrace.TracerProvider) ([]trace.TraceID, error) {
	tracer := tp.Tracer("trainer")

	// The user's ordinary logger: JSON on stdout, Debug and up, with a stack
	// on errors. zaplens tees it: the same lines on stdout plus trace ids,
	// and Info and up to OpenTelemetry; Debug lines are held in their
	// step's trace, and go to OpenTelemetry only if the step fails.
	base := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(stdout), zapcore.DebugLevel)
	logger := zap.New(zaplens.NewTee(base,
		zaplens.WithLoggerProvider(lp), zaplens.WithLevel(zapcore.InfoLevel), zaplens.WithDefaultScope("trainer"),
		zaplens.WithHold(zapcore.DebugLevel)),
		zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel))

	logger.Info("training started", zap.Int("steps", steps), zap.String("model", "tiny-gpt"))
	traces := train(ctx, tracer, logger)
	logger.Info("training finished")

	// Flush: Sync flushes the logger provider within the bridge's bound;
	// the shutdowns flush what is left and stop the exporters.
	_ = logger.Sync()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	if terr := tp.Shutdown(sctx); terr != nil {
		err = fmt.Errorf("spans: %w", terr)
	}
	if lerr := lp.Shutdown(sctx); lerr != nil {
		err = errors.Join(err, fmt.Errorf("logs: %w", lerr))
	}
	return traces, err
}

func serviceName() attribute.KeyValue {
	if n := os.Getenv("OTEL_SERVICE_NAME"); n != "" {
		return attribute.String("service.name", n)
	}
	return attribute.String("service.name", "zaplens-example")
}

// train simulates the loop: each step is a span with child spans for
// loading data, the optimizer step and, every other step, a checkpoint. Each
// step's span is the root of a trace of its own; train returns their ids.
func train(ctx context.Context, tracer trace.Tracer, logger *zap.Logger) []trace.TraceID {
	data := logger.Named("trainer").Named("data")
	optim := logger.Named("trainer").Named("optim")
	ckpt := logger.Named("trainer").Named("checkpoint")
	loss := 2.31
	var traces []trace.TraceID

	for step := 1; step <= steps; step++ {
		sctx, span := tracer.Start(ctx, "train_step", trace.WithAttributes(attribute.Int("step", step)))
		traces = append(traces, span.SpanContext().TraceID())

		dctx, dspan := tracer.Start(sctx, "data.load")
		// Debug: on stdout, and held in the step's trace: shipped only if
		// the step fails.
		data.Debug("prefetch queue", zaplens.Context(dctx), zap.Int("depth", 4))
		work(15 * time.Millisecond)
		data.Info("batch ready", zaplens.Context(dctx), zap.Int("step", step), zap.Int("batch_size", 32), zap.Int("tokens", 32*2048), zap.String("shard", fmt.Sprintf("shard-%03d", step%3)))
		dspan.End()

		octx, ospan := tracer.Start(sctx, "optim.step")
		work(25 * time.Millisecond)
		loss *= 0.83
		optim.Debug("optimizer state", zaplens.Context(octx), zap.Float64("loss_scale", 65536), zap.Int("skipped_steps", 0))
		if step == 3 {
			optim.Warn("gradient norm clipped", zaplens.Context(octx), zap.Int("step", step), zap.Float64("grad_norm", 14.2), zap.Float64("max_norm", 1.0))
		}
		optim.Info("step done", zaplens.Context(octx), zap.Int("step", step), zap.Float64("loss", round(loss)), zap.Float64("lr", 3e-4), zap.Duration("step_time", 40*time.Millisecond))
		ospan.End()

		if step%2 == 0 {
			cctx, cspan := tracer.Start(sctx, "checkpoint.save")
			work(10 * time.Millisecond)
			path := fmt.Sprintf("/ckpt/step-%04d.pt", step)
			ckpt.Info("checkpoint saved", zaplens.Context(cctx), zap.String("path", path), zap.Int64("bytes", 48<<20))
			upload(cctx, ckpt, path, step == steps)
			cspan.End()
		}
		span.End()
	}
	return traces
}

// upload stands in for a checkpoint's upload, retried; failing, it
// fails all three attempts and logs an error, which ships the Debug lines
// its step's trace holds.
func upload(ctx context.Context, ckpt *zap.Logger, path string, fail bool) {
	for attempt := 1; attempt <= 3; attempt++ {
		ckpt.Debug("upload attempt", zaplens.Context(ctx), zap.String("path", path), zap.Int("attempt", attempt))
		work(5 * time.Millisecond)
		if !fail {
			return
		}
	}
	err := fmt.Errorf("upload %s: %w", path, errors.New("connection reset by peer"))
	ckpt.Error("checkpoint upload failed", zaplens.Context(ctx), zap.String("path", path), zap.Int("attempts", 3), zap.Error(err))
}

// work stands in for compute.
func work(d time.Duration) { time.Sleep(d) }

func round(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }
