// Command service is the README's complete service: a net/http server whose
// requests are spans (otelhttp), whose zap lines print with their trace ids,
// and whose spans and log records go to the same OTLP endpoint; a request
// that fails (/hello?fail, a 500) sends its Debug lines too. The README
// shows this file from "package main" on; a test keeps the two the same.
//
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4317 go run .
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/holdspan"
	"github.com/zaplens/zaplens/otlplog"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/zap"
)

func main() {
	ctx := context.Background()

	// Spans: without a TracerProvider, otelhttp's spans are no-ops and no
	// line gets a trace id. Both providers read OTEL_EXPORTER_OTLP_ENDPOINT.
	spans, err := otlptracegrpc.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans),
		sdktrace.WithSpanProcessor(holdspan.New()), // a failed request ships its held Debug lines
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "checkout"))))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	// Logs: your zap logger, teed into zaplens's OTLP pipeline.
	provider, err := otlplog.NewLoggerProvider(ctx, otlplog.WithServiceName("checkout"))
	if err != nil {
		log.Print(err) // provider is a working no-op: logging goes on
	}
	base, _ := zap.NewProduction()
	logger := base.WithOptions(zaplens.WrapCore(zaplens.WithLoggerProvider(provider),
		zaplens.WithHold(zap.DebugLevel))) // Debug lines held per request, sent if it fails

	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		log := logger.With(zaplens.Context(r.Context())) // this request's span
		log.Debug("request", zap.String("query", r.URL.RawQuery))
		if r.URL.Query().Has("fail") {
			http.Error(w, "failed", http.StatusInternalServerError) // otelhttp marks the span
			return
		}
		log.Info("hello", zap.String("path", r.URL.Path))
		fmt.Fprintln(w, "hello")
	})
	srv := &http.Server{
		Addr:    ":" + cmp.Or(os.Getenv("PORT"), "8080"),
		Handler: otelhttp.NewHandler(mux, "http.server"),
	}
	go func() {
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			logger.Fatal("listen", zap.Error(err))
		}
	}()

	stop, unregister := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer unregister()
	<-stop.Done()

	// Stop in this order, all within 8 s (docker stop waits 10): no new
	// requests, then the lines they logged, then their spans.
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	_ = logger.Sync() // stdout, and the log pipeline within 5 s (WithFlushTimeout)
	if err := provider.Shutdown(ctx); err != nil {
		log.Print(err) // a *otlplog.DeliveryError: how many lines were lost, and why
	}
	_ = tp.Shutdown(ctx)
}
