package otlplog_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
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

// With OTEL_CONFIG_FILE naming a declarative configuration file, the
// provider takes its logger_provider and resource sections; options still
// win. What the file asks that zaplens cannot do is an error with the
// setting's path.
func ExampleNewLoggerProvider_configFile() {
	ctx := context.Background()
	os.Setenv("OTEL_CONFIG_FILE", "testdata/otelconf/simple.yaml")
	defer os.Unsetenv("OTEL_CONFIG_FILE")
	provider, err := otlplog.NewLoggerProvider(ctx, otlplog.WithLossWriter(nil))
	fmt.Println(err)
	_ = provider.Shutdown(ctx)
	// Output:
	// zaplens: no log records will be shipped: OTEL_CONFIG_FILE=testdata/otelconf/simple.yaml: logger_provider.processors[0].simple: not supported; zaplens exports in batches off the logging call: use batch
}
