package benchmarks

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/bridges/otelzap"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/otlplog"
)

// A pipeline is one contender as a user runs it: its logger over the
// user's JSON core, and behind it, for the bridges, its own default export
// pipeline sending OTLP/gRPC to a receiver in another process.
type pipeline struct {
	name   string
	logger *zap.Logger
	// ctx makes the field that carries a context to the contender.
	ctx func(context.Context) zap.Field
	// shutdown flushes and stops the export pipeline.
	shutdown func(context.Context) error
	// lost is the records the pipeline says it lost (dropped, failed, or
	// queued after a Shutdown that ran out of time); ok is false for a
	// pipeline that does not count them.
	lost func() (n int64, ok bool)
}

// The contenders of the out-of-process benchmarks, in the tables' order.
var pipelineNames = []string{"zap", "official", "zaplens"}

// pipelineConfig is what a benchmark changes from the defaults.
type pipelineConfig struct {
	// officialQueue, if not zero, is the official pipeline's
	// sdklog.WithMaxQueueSize (the SDK's default is 2048).
	officialQueue int
	// http sends zaplens's lines over OTLP/HTTP with protobuf instead of
	// OTLP/gRPC; the official pipeline stays on otlploggrpc.
	http bool
}

// startPipeline builds the named contender exporting to the sink s, over
// OTLP/gRPC without TLS unless cfg says otherwise.
func startPipeline(tb testing.TB, name string, s *sink, cfg pipelineConfig) pipeline {
	tb.Helper()
	endpoint := s.GRPC
	noLoss := func() (int64, bool) { return 0, false }
	switch name {
	case "zap":
		// What the user pays today: no bridge, no export, no context.
		return pipeline{
			name:     name,
			logger:   newLogger(newBaseCore()),
			ctx:      func(context.Context) zap.Field { return zap.Skip() },
			shutdown: func(context.Context) error { return nil },
			lost:     noLoss,
		}
	case "official":
		// go.opentelemetry.io/contrib/bridges/otelzap teed with the same
		// core, as its docs show, on the SDK's pipeline: BatchProcessor
		// (queue 2048, batch 512, 1 s interval) in front of otlploggrpc.
		exp, err := otlploggrpc.New(context.Background(),
			otlploggrpc.WithEndpoint(endpoint), otlploggrpc.WithInsecure())
		if err != nil {
			tb.Fatal(err)
		}
		var bopts []sdklog.BatchProcessorOption
		if cfg.officialQueue > 0 {
			bopts = append(bopts, sdklog.WithMaxQueueSize(cfg.officialQueue))
		}
		p := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, bopts...)))
		return pipeline{
			name: name,
			logger: newLogger(zapcore.NewTee(newBaseCore(), otelzap.NewCore("github.com/zaplens/zaplens/benchmarks",
				otelzap.WithLoggerProvider(p)))),
			ctx:      func(ctx context.Context) zap.Field { return zap.Any("ctx", ctx) },
			shutdown: p.Shutdown,
			lost:     noLoss, // the SDK drops without a count a program can read
		}
	case "zaplens", "zaplens-spool", "zaplens-noids":
		// zaplens.NewTee over the same core on otlplog.NewLoggerProvider's
		// own pipeline with its defaults, told only where the receiver is;
		// with the spool on, in a directory of the test's. zaplens-noids
		// leaves the ids out of the JSON core's line (WithIDFormat(nil)):
		// the same output as the official bridge's tee, which prints none.
		opts := []otlplog.Option{otlplog.WithEndpoint("http://" + endpoint)}
		if cfg.http {
			opts = []otlplog.Option{otlplog.WithEndpoint("http://" + s.OTLPHTTP), otlplog.WithProtocol("http/protobuf")}
		}
		if name == "zaplens-spool" {
			opts = append(opts, otlplog.WithSpool(tb.TempDir()))
		}
		p, err := otlplog.NewLoggerProvider(context.Background(), opts...)
		if err != nil {
			tb.Fatal(err)
		}
		topts := []zaplens.Option{zaplens.WithLoggerProvider(p)}
		if name == "zaplens-noids" {
			topts = append(topts, zaplens.WithIDFormat(nil))
		}
		return pipeline{
			name:     name,
			logger:   newLogger(zaplens.NewTee(newBaseCore(), topts...)),
			ctx:      zaplens.Context,
			shutdown: p.Shutdown,
			lost: func() (int64, bool) {
				st := p.Stats()
				return int64(st.Lost() + st.Queued), true
			},
		}
	}
	tb.Fatalf("no pipeline %q", name)
	return pipeline{}
}

// stop shuts the pipeline down, waiting up to a minute for it to deliver
// what it holds.
func (p pipeline) stop(tb testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.shutdown(ctx); err != nil {
		tb.Logf("%s: shutdown: %v", p.name, err)
	}
}

// TestPipelinesDeliver checks the out-of-process harness: every bridge's
// pipeline, zaplens's with its spool too, delivers, at a pace its queue
// holds, every line to the sink, and no more.
func TestPipelinesDeliver(t *testing.T) {
	const lines = 1000
	for _, name := range append(pipelineNames[1:], "zaplens-spool", "zaplens-noids") {
		t.Run(name, func(t *testing.T) {
			s := startSink(t)
			p := startPipeline(t, name, s, pipelineConfig{officialQueue: 2 * lines})
			cf := p.ctx(traceCtx)
			for i := range lines {
				info5(p.logger, cf, i)
			}
			p.stop(t)
			got := s.Count(t)
			if got.Records != lines || got.Duplicates != 0 {
				t.Errorf("sink got %+v, want %d records", got, lines)
			}
			if n, ok := p.lost(); ok && n != 0 {
				t.Errorf("pipeline counted %d lost", n)
			}
		})
	}
}
