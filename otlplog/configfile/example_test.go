package configfile_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/otlplog"
	_ "github.com/zaplens/zaplens/otlplog/configfile"
)

// With the blank import, NewLoggerProvider takes the logger_provider and
// resource sections of the file OTEL_CONFIG_FILE names: here the console
// exporter, a value length limit of 8 ("inference" goes as "inferenc")
// and the service name. Options still
// win over the file (the console writer is one).
func Example() {
	ctx := context.Background()
	os.Setenv("OTEL_CONFIG_FILE", "testdata/console.yaml") // set by the deployment
	defer os.Unsetenv("OTEL_CONFIG_FILE")
	var sent bytes.Buffer // the console exporter's OTLP/JSON
	provider, err := otlplog.NewLoggerProvider(ctx, otlplog.WithConsoleWriter(&sent))
	if err != nil {
		fmt.Println(err)
		return
	}
	logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(provider)))
	logger.Info("step done", zap.String("phase", "inference"))
	_ = provider.Shutdown(ctx)

	fmt.Println(strings.Contains(sent.String(), `"trainer"`), strings.Contains(sent.String(), `"inferenc"`))
	// Output: true true
}

// What the file asks that zaplens's one batch pipeline cannot do is an
// error with the setting's path; the provider then drops what it is given
// and says why.
func Example_refused() {
	ctx := context.Background()
	os.Setenv("OTEL_CONFIG_FILE", "testdata/simple.yaml")
	defer os.Unsetenv("OTEL_CONFIG_FILE")
	provider, err := otlplog.NewLoggerProvider(ctx, otlplog.WithLossWriter(nil))
	fmt.Println(err)
	_ = provider.Shutdown(ctx)
	// Output:
	// zaplens: no log records will be shipped: OTEL_CONFIG_FILE=testdata/simple.yaml: logger_provider.processors[0].simple: not supported; zaplens exports in batches off the logging call: use batch
}
