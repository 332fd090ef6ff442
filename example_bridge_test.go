package zaplens_test

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
)

// eventExporter prints a record's event name beside its body and
// attributes.
type eventExporter struct{ printExporter }

func (eventExporter) Export(_ context.Context, rs []sdklog.Record) error {
	for _, r := range rs {
		fmt.Printf("otel: body=%q event=%q", r.Body().AsString(), r.EventName())
		r.WalkAttributes(func(kv attribute.KeyValue) bool {
			fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
			return true
		})
		fmt.Println()
	}
	return nil
}

func eventProvider() *sdklog.LoggerProvider {
	return sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(eventExporter{})))
}

// The event name is the record's own, not an attribute; the program's own
// output prints it under event.name.
func ExampleEventName() {
	base, _, _ := exampleSetup()
	logger := base.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(eventProvider())))

	logger.Info("checkpoint saved", zaplens.EventName("train.checkpoint"), zap.Int("step", 1000))
	// Output:
	// {"level":"info","msg":"checkpoint saved","event.name":"train.checkpoint","step":1000}
	// otel: body="checkpoint saved" event="train.checkpoint" step=1000
}

// The HTTP loggers are bridged from Warn up, the training loop from Debug,
// every other logger from Info.
func ExampleWithLevelFor() {
	logger := zap.New(zaplens.NewCore(
		zaplens.WithLoggerProvider(eventProvider()),
		zaplens.WithLevel(zapcore.InfoLevel),
		zaplens.WithLevelFor("http", zapcore.WarnLevel),
		zaplens.WithLevelFor("megatron.training", zapcore.DebugLevel),
	))

	logger.Named("http").Info("GET /healthz")
	logger.Named("http").Warn("slow request")
	logger.Named("megatron").Named("training").Debug("micro-batch")
	logger.Named("megatron").Debug("not the training loop")
	// Output:
	// otel: body="slow request" event=""
	// otel: body="micro-batch" event=""
}

// The tenant of the request, carried in W3C baggage, goes on every record
// logged with its context.
func ExampleWithBaggage() {
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(eventProvider()), zaplens.WithBaggage("tenant")))
	tenant, _ := baggage.NewMemberRaw("tenant", "acme")
	other, _ := baggage.NewMemberRaw("session", "s-42")
	bg, _ := baggage.New(tenant, other)
	ctx := baggage.ContextWithBaggage(context.Background(), bg)

	logger.Info("quota checked", zaplens.Context(ctx), zap.Int("left", 3))
	// Output:
	// otel: body="quota checked" event="" left=3 tenant=acme
}

// Lines logged inside a span show in the trace: Info and above as span
// events, an Error one also as the span's error and status.
func ExampleWithSpanEvents() {
	recorder := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("example")
	logger := zap.New(zaplens.NewCore(
		zaplens.WithLoggerProvider(sdklog.NewLoggerProvider()), // no log backend needed
		zaplens.WithSpanEvents(zapcore.InfoLevel),
		zaplens.WithSpanStatus(zapcore.ErrorLevel),
	))

	ctx, span := tracer.Start(context.Background(), "load")
	logger.Info("reading shards", zaplens.Context(ctx), zap.Int("shards", 8))
	logger.Error("shard missing", zaplens.Context(ctx), zap.Error(errors.New("shard 3: not found")))
	span.End()

	s := recorder.Ended()[0]
	for _, ev := range s.Events() {
		fmt.Println("event:", ev.Name, ev.Attributes)
	}
	fmt.Println("status:", s.Status().Code, s.Status().Description)
	// Output:
	// event: reading shards [{"shards":8}]
	// event: shard missing []
	// event: exception [{"exception.type":"*errors.errorString"} {"exception.message":"shard 3: not found"}]
	// status: Error shard missing
}

// WithSpanStatus alone marks the span failed, adding no event.
func ExampleWithSpanStatus() {
	recorder := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)).Tracer("example")
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(sdklog.NewLoggerProvider()),
		zaplens.WithSpanStatus(zapcore.ErrorLevel)))

	ctx, span := tracer.Start(context.Background(), "save")
	logger.Error("disk full", zaplens.Context(ctx))
	span.End()

	s := recorder.Ended()[0]
	fmt.Println(len(s.Events()), "events; status:", s.Status().Code, s.Status().Description)
	// Output:
	// 0 events; status: Error disk full
}

// A training job bridges Info and above from rank 0 and Warn and above from
// the other ranks; the rank comes from torchrun, Open MPI or Slurm.
func ExampleWithRankLevel() {
	bridge := zaplens.NewCore(zaplens.WithRankLevel([]int{0}, zapcore.InfoLevel, zapcore.WarnLevel))
	fmt.Println(bridge.Enabled(zapcore.InfoLevel)) // true on rank 0, false elsewhere
}
