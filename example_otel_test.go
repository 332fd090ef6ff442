package zaplens_test

import (
	"context"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

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

	provider, _ := zaplens.NewLoggerProvider(ctx,
		zaplens.WithResource(res),
		zaplens.WithExporterName("console"),
		zaplens.WithConsoleWriter(io.Discard),
	)
	defer provider.Shutdown(ctx)
	fmt.Println("logs and traces share", res.Len(), "resource attributes")
	// Output: logs and traces share 2 resource attributes
}
