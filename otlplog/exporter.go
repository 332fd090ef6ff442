package otlplog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/pipeline"
	"github.com/zaplens/zaplens/internal/transport"
)

// exporter is the end of the pipeline: how a request leaves the process.
type exporter struct {
	export pipeline.ExportFunc
	close  func(context.Context) error
	target *target // OTLP's, for the metrics
}

// newExporter builds the exporter the configuration names.
func newExporter(c *providerConfig, p *LoggerProvider) (exporter, error) {
	switch {
	case c.exportFunc != nil: // tests
		return exporter{export: c.exportFunc, close: func(context.Context) error { return nil }}, nil
	case c.exporterName.value == "console":
		w := c.consoleWriter
		if w == nil {
			w = os.Stdout
		}
		return consoleExporter(w), nil
	}
	return newOTLPExporter(c, p)
}

// consoleExporter prints each request as one line of OTLP/JSON, the form
// the Collector's file exporter writes and its otlpjsonfile receiver reads.
func consoleExporter(w io.Writer) exporter {
	var mu sync.Mutex
	return exporter{
		export: func(_ context.Context, body []byte, n int, _ bool) (int, error) {
			var req collogspb.ExportLogsServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				return n, err
			}
			line, err := protojson.Marshal(&req)
			if err != nil {
				return n, err
			}
			mu.Lock()
			defer mu.Unlock()
			if _, err := w.Write(append(line, '\n')); err != nil {
				return n, err
			}
			return 0, nil
		},
		close: func(context.Context) error { return nil },
	}
}

// otlpExporter sends requests with a transport client.
type otlpExporter struct {
	client   transport.Client
	endpoint string
	p        *LoggerProvider
}

func newOTLPExporter(c *providerConfig, p *LoggerProvider) (exporter, error) {
	t, err := c.target()
	if err != nil {
		return exporter{}, err
	}
	x := &otlpExporter{endpoint: t.display, p: p}
	client, err := transport.New(transport.Config{
		Protocol:     t.protocol,
		Endpoint:     t.Endpoint,
		TLS:          c.tlsConfig.value,
		Headers:      c.headers.value,
		Gzip:         c.compression.value == "gzip",
		Timeout:      c.otlpTimeout.value,
		RetryElapsed: c.retryElapsed.value,
		UserAgent:    "zaplens/" + Version,
		OnRetry:      x.warnRetry,
	})
	if err != nil {
		return exporter{}, err
	}
	x.client = client
	return exporter{export: x.export, close: client.Close, target: &t}, nil
}

func (x *otlpExporter) export(ctx context.Context, body []byte, n int, final bool) (int, error) {
	// Retrying costs nothing until the queue needs room: then these, the
	// oldest records, give way.
	ctx = transport.WithGiveWay(ctx, x.p.pipe.Full())
	if final {
		return x.send(ctx, body, n, transport.Final)
	}
	// A flush that comes while this export waits to retry makes it try
	// again at once, as the flush would; an attempt in flight is left to
	// finish, since the collector may already hold its records.
	return x.send(transport.WithUrgent(ctx, x.p.pipe.Urgent()), body, n, transport.Normal)
}

func (x *otlpExporter) send(ctx context.Context, body []byte, n int, mode transport.Mode) (int, error) {
	res := x.client.Export(ctx, body, n, mode)
	switch {
	case errors.Is(res.Err, transport.ErrClosed):
		// Shutdown closed the client: its report tells what this cost,
		// and there is nothing a user could do about the export.
		res.Err = errShutDown
	case res.Err != nil:
		x.warn(res.Cause, res.Err, res.Cause.Hint(x.endpoint))
	}
	return int(res.Rejected), resultError(res)
}

// errShutDown is the error of an export that Shutdown cut short.
var errShutDown = shutDownError{}

type shutDownError struct{}

func (shutDownError) Error() string { return "Shutdown closed the connection before the export ended" }

// Unwrap lets errors.Is find the transport's sentinel.
func (shutDownError) Unwrap() error { return transport.ErrClosed }

// warn tells the first failure of each cause at once, with what to do
// about it, if anything: a cause with no advice of its own is told bare.
func (x *otlpExporter) warn(cause transport.Cause, err error, hint string) {
	if hint == "" {
		x.p.reporter.warnOnce(cause, fmt.Errorf("export to %s failed: %w", x.endpoint, err))
		return
	}
	x.p.reporter.warnOnce(cause, fmt.Errorf("export to %s failed: %w; %s", x.endpoint, err, hint))
}

// warnRetry tells the first failed attempt of each cause at once, before
// its retries have run out, as a retry rather than a loss.
func (x *otlpExporter) warnRetry(cause transport.Cause, err error) {
	x.warn(cause, err, cause.RetryHint(x.endpoint))
}
