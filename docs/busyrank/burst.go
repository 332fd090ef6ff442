//go:build ignore

// Burst runs the busy-rank workload of the README ("Sending logs to a collector"): steps of lines
// zap lines (four fields each) at full speed, each followed by compute,
// through zaplens.NewTee to an OTLP/gRPC endpoint, with zaplens's pipeline
// (-mode zaplens), the SDK's defaults (-mode sdk) or none (-mode off). It
// prints the logging time, the peak heap in use and the provider's counts.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/otlplog"
)

func main() {
	mode := flag.String("mode", "zaplens", "zaplens or sdk")
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "")
	steps := flag.Int("steps", 10, "")
	lines := flag.Int("lines", 10000, "")
	compute := flag.Duration("compute", 500*time.Millisecond, "")
	queue := flag.Int("queue", 0, "zaplens queue size (0: default)")
	batch := flag.Int("batch", 0, "zaplens batch size (0: default)")
	block := flag.Duration("block", 0, "zaplens WithBlockOnFull")
	flag.Parse()
	ctx := context.Background()

	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	var p log.LoggerProvider
	var shutdown func(context.Context) error
	var zp *otlplog.LoggerProvider
	switch *mode {
	case "zaplens":
		opts := []otlplog.Option{otlplog.WithEndpoint("http://" + *endpoint)}
		if *queue > 0 {
			opts = append(opts, otlplog.WithQueueSize(*queue))
		}
		if *block > 0 {
			opts = append(opts, otlplog.WithBlockOnFull(*block))
		}
		if *batch > 0 {
			opts = append(opts, otlplog.WithBatchSize(*batch))
		}
		var err error
		zp, err = otlplog.NewLoggerProvider(ctx, opts...)
		if err != nil {
			panic(err)
		}
		p, shutdown = zp, zp.Shutdown
	case "off":
		zp, _ = otlplog.NewLoggerProvider(ctx, otlplog.WithExporterName("none"))
		p, shutdown = zp, zp.Shutdown
	case "sdk":
		exp, err := otlploggrpc.New(ctx, otlploggrpc.WithInsecure(), otlploggrpc.WithEndpoint(*endpoint))
		if err != nil {
			panic(err)
		}
		sp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)))
		p, shutdown = sp, sp.Shutdown
	}
	base := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	logger := zap.New(zaplens.NewTee(base, zaplens.WithLoggerProvider(p)))

	start := time.Now()
	var logging time.Duration
	for s := range *steps {
		t0 := time.Now()
		for i := range *lines {
			logger.Info("step progress", zap.Int("step", s), zap.Int("i", i), zap.Float64("loss", 0.41), zap.String("phase", "train"))
		}
		logging += time.Since(t0)
		time.Sleep(*compute)
	}
	elapsed := time.Since(start)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t0 := time.Now()
	err := shutdown(sctx)
	close(stop)
	fmt.Printf("mode=%s steps=%d lines=%d compute=%v: logging %v total %v shutdown %v; peak heap in use %.1f MiB\n",
		*mode, *steps, *lines, *compute, logging.Round(time.Millisecond), elapsed.Round(time.Millisecond),
		time.Since(t0).Round(time.Millisecond), float64(peak.Load())/(1<<20))
	if zp != nil {
		fmt.Printf("stats: %v\n", zp.Stats())
	}
	if err != nil {
		fmt.Printf("shutdown error: %v\n", err)
	}
}
