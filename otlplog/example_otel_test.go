package otlplog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
)

// The program's TracerProvider and the log pipeline share one resource, so
// that a backend joins a trace and its logs by it. Here it is printed
// instead of sent: the console exporter writes each request as OTLP/JSON.
func ExampleWithResource() {
	ctx := context.Background()
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "trainer"), attribute.String("k8s.pod.name", "trainer-0")),
		// resource.WithContainer(), resource.WithHost(), a cloud detector...
	)
	if err != nil {
		fmt.Println(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res))
	defer tp.Shutdown(ctx)

	provider, _ := otlplog.NewLoggerProvider(ctx,
		otlplog.WithResource(res),
		otlplog.WithExporterName("console"),
		otlplog.WithConsoleWriter(io.Discard),
	)
	defer provider.Shutdown(ctx)
	fmt.Println("logs and traces share", res.Len(), "resource attributes")
	// Output: logs and traces share 2 resource attributes
}

// Secrets stay out of what the provider sends: the value of a matching key
// goes as "[redacted]", at any depth and in any case. The base core of a
// tee, the program's own, still prints them: it is not the provider's.
func ExampleWithRedactKeys() {
	ctx := context.Background()
	var sent bytes.Buffer // the console exporter's OTLP/JSON
	provider, _ := otlplog.NewLoggerProvider(ctx,
		otlplog.WithRedactKeys("password", "authorization"),
		otlplog.WithExporterName("console"),
		otlplog.WithConsoleWriter(&sent),
	)
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(provider)))
	logger.Info("login", zap.String("user", "ann"), zap.String("Password", "hunter2"),
		zap.Any("headers", map[string]string{"Authorization": "Bearer abc"}))
	_ = provider.Shutdown(ctx)

	fmt.Println(strings.Contains(sent.String(), "hunter2"), strings.Contains(sent.String(), "Bearer"))
	fmt.Println(strings.Count(sent.String(), "[redacted]"))
	// Output:
	// false false
	// 2
}
