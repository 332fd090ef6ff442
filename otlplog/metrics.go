package otlplog

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/otelconv"

	"github.com/zaplens/zaplens/internal/pipeline"
	"github.com/zaplens/zaplens/internal/transport"
)

// The pipeline reports on itself in the metrics the OpenTelemetry SDK's
// own pipeline records, under the names, units, instrument kinds and
// attributes of the semantic conventions for SDK metrics (v1.43.0, as
// sdk/log v1.47.0 and otlploggrpc v0.23.0 record them):
//
//	otel.sdk.log.created                   records handed to the loggers (Stats.Emitted)
//	otel.sdk.processor.log.queue.capacity  records the queue holds when full
//	otel.sdk.processor.log.queue.size      records waiting in the queue
//	otel.sdk.processor.log.processed       records handed to the exporter, and with
//	                                       error.type those dropped (Stats.Dropped)
//	otel.sdk.exporter.log.inflight         records in an export not yet answered
//	otel.sdk.exporter.log.exported         records delivered (Stats.Exported), and with
//	                                       error.type those failed (Stats.Failed)
//	otel.sdk.exporter.operation.duration   seconds per export, retries included
//
// All but the duration are observable instruments: at each collection one
// callback reads the pipeline's counts under the lock that keeps them, so
// that they tell the same story as Stats and cost the logging call
// nothing. The duration is recorded once per export, by the export
// goroutine.

// metricsScope is the instrumentation scope of the metrics: zaplens, not
// the SDK packages whose metrics these are.
const metricsScope = "github.com/zaplens/zaplens"

// Component types the conventions do not name are, as they ask, the
// language's name of the type, as stdoutlog does for its own.
const (
	consoleComponentType = "github.com/zaplens/zaplens.consoleExporter"
	funcComponentType    = "github.com/zaplens/zaplens.exportFunc" // tests' ExportFunc
)

// Error types: the conventions' for drops, and for failed exports the
// cause the transport found, in snake case (as transport.Cause names it).
const (
	errorTypeQueueFull       = "queue_full"
	errorTypeAlreadyShutdown = "already_shutdown"
)

// metricsN numbers the providers that record metrics, for
// otel.component.name ("batching_log_processor/0"): a provider's
// processor and exporter share its number.
var metricsN atomic.Int64

// metricsProvider is the MeterProvider the metrics go to, nil when they
// are off: the option's, or the global one when OTEL_GO_X_OBSERVABILITY
// (its row in variables.go) turns them on; that variable is read only
// when no option gave one.
func (c *providerConfig) metricsProvider() metric.MeterProvider {
	if c.meterProvider != nil {
		return c.meterProvider
	}
	// No option sets the variable's setting: its bad value is a warning
	// (triage), never fatal.
	_ = c.triage(c.readStep(stepMetrics))
	if c.observability.value {
		return otel.GetMeterProvider()
	}
	return nil
}

// pipelineMetrics records one provider's metrics. A nil one records none.
type pipelineMetrics struct {
	created, queueCapacity, queueSize, processed, inflight, exported metric.Int64Observable
	duration                                                         metric.Float64Histogram

	meter                                    metric.Meter
	processor, queueFull, shutdown, exporter metric.MeasurementOption
	exporterAttrs                            []attribute.KeyValue
	protocol                                 transport.Protocol // OTLP's, "" for other exporters

	obsMu  sync.Mutex // the callback's, which collections may run at once
	obs    pipeline.Observation
	failed map[string]metric.MeasurementOption // exported, by error.type

	durMu     sync.Mutex
	durations map[durationKey]metric.MeasurementOption
}

type durationKey struct{ status, errorType string }

// newPipelineMetrics makes the instruments, or returns nil when the
// metrics are off or cannot be made (that error goes to otel.Handle: the
// logs go on without them).
func newPipelineMetrics(c *providerConfig, exp exporter) *pipelineMetrics {
	mp := c.metricsProvider()
	if mp == nil {
		return nil
	}
	m, err := makeMetrics(mp, c, exp)
	if err != nil {
		otel.Handle(fmt.Errorf("zaplens: metrics: %w", err))
		return nil
	}
	return m
}

func makeMetrics(mp metric.MeterProvider, c *providerConfig, exp exporter) (*pipelineMetrics, error) {
	meter := mp.Meter(metricsScope, metric.WithInstrumentationVersion(Version), metric.WithSchemaURL(semconv.SchemaURL))
	m := &pipelineMetrics{meter: meter, failed: map[string]metric.MeasurementOption{}, durations: map[durationKey]metric.MeasurementOption{}}
	var errs []error
	counter := func(name, desc, unit string) metric.Int64Observable {
		i, err := meter.Int64ObservableCounter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		return i
	}
	upDown := func(name, desc, unit string) metric.Int64Observable {
		i, err := meter.Int64ObservableUpDownCounter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		errs = append(errs, err)
		return i
	}
	var (
		created   otelconv.SDKLogCreated
		qCap      otelconv.SDKProcessorLogQueueCapacity
		qSize     otelconv.SDKProcessorLogQueueSize
		processed otelconv.SDKProcessorLogProcessed
		inflight  otelconv.SDKExporterLogInflight
		exported  otelconv.SDKExporterLogExported
	)
	m.created = counter(created.Name(), created.Description(), created.Unit())
	m.queueCapacity = upDown(qCap.Name(), qCap.Description(), qCap.Unit())
	m.queueSize = upDown(qSize.Name(), qSize.Description(), qSize.Unit())
	m.processed = counter(processed.Name(), processed.Description(), processed.Unit())
	m.inflight = upDown(inflight.Name(), inflight.Description(), inflight.Unit())
	m.exported = counter(exported.Name(), exported.Description(), exported.Unit())
	duration, err := otelconv.NewSDKExporterOperationDuration(meter)
	m.duration = duration.Inst()
	if err := errors.Join(append(errs, err)...); err != nil {
		return nil, err
	}

	id := metricsN.Add(1) - 1
	procType := otelconv.ComponentTypeBatchingLogProcessor
	proc := []attribute.KeyValue{
		semconv.OTelComponentName(fmt.Sprintf("%s/%d", procType, id)),
		semconv.OTelComponentTypeKey.String(string(procType)),
	}
	m.processor = metric.WithAttributeSet(attribute.NewSet(proc...))
	m.queueFull = metric.WithAttributeSet(attribute.NewSet(append(proc, semconv.ErrorTypeKey.String(errorTypeQueueFull))...))
	m.shutdown = metric.WithAttributeSet(attribute.NewSet(append(proc, semconv.ErrorTypeKey.String(errorTypeAlreadyShutdown))...))

	expType := consoleComponentType
	var server []attribute.KeyValue
	switch {
	case c.exportFunc != nil:
		expType = funcComponentType
	case exp.target != nil:
		expType = string(otelconv.ComponentTypeOtlpHTTPLogExporter)
		if exp.target.protocol == transport.GRPC {
			expType = string(otelconv.ComponentTypeOtlpGRPCLogExporter)
		}
		server = []attribute.KeyValue{semconv.ServerAddress(exp.target.Host), semconv.ServerPort(exp.target.Port)}
		m.protocol = exp.target.protocol
	}
	m.exporterAttrs = append([]attribute.KeyValue{
		semconv.OTelComponentName(fmt.Sprintf("%s/%d", expType, id)),
		semconv.OTelComponentTypeKey.String(expType),
	}, server...)
	m.exporter = metric.WithAttributeSet(attribute.NewSet(m.exporterAttrs...))
	return m, nil
}

// wrap returns export timed by the duration metric: one observation per
// export, retries included, with error.type and the status of the last
// answer when it failed.
func (m *pipelineMetrics) wrap(export pipeline.ExportFunc) pipeline.ExportFunc {
	if m == nil {
		return export
	}
	return func(ctx context.Context, body []byte, n int, final bool) (int, error) {
		start := time.Now()
		rejected, err := export(ctx, body, n, final)
		m.duration.Record(ctx, time.Since(start).Seconds(), m.durationOption(err))
		return rejected, err
	}
}

// durationOption is the attribute set of an export's duration.
func (m *pipelineMetrics) durationOption(err error) metric.MeasurementOption {
	key := durationKey{}
	if err != nil {
		key.errorType = pipeline.ErrorType(err)
		var ee *exportError
		if errors.As(err, &ee) {
			key.status = ee.status
		}
	}
	m.durMu.Lock()
	defer m.durMu.Unlock()
	if o, ok := m.durations[key]; ok {
		return o
	}
	attrs := append([]attribute.KeyValue(nil), m.exporterAttrs...)
	// A success is OK or 200 whatever the answer's 2xx, as the SDK has it.
	status := key.status
	switch m.protocol {
	case transport.GRPC:
		if err == nil {
			status = "OK"
		}
		if status != "" {
			attrs = append(attrs, semconv.RPCResponseStatusCode(status))
		}
	case transport.HTTPProtobuf:
		if err == nil {
			status = "200"
		}
		if code, err := strconv.Atoi(status); err == nil {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(code))
		}
	}
	if err != nil {
		attrs = append(attrs, semconv.ErrorTypeKey.String(key.errorType))
	}
	o := metric.WithAttributeSet(attribute.NewSet(attrs...))
	if len(m.durations) < 64 { // bounded, though statuses and causes are few
		m.durations[key] = o
	}
	return o
}

// observe registers the callback that reads pipe at each collection. It
// holds pipe weakly, and is unregistered once pipe is garbage: a provider
// shut down and dropped leaves nothing behind, while one still held goes
// on reporting its final counts, so that a MeterProvider shut down after
// it still exports them.
func (m *pipelineMetrics) observe(pipe *pipeline.Pipeline) {
	if m == nil {
		return
	}
	wp := weak.Make(pipe)
	reg, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if pipe := wp.Value(); pipe != nil {
			m.report(pipe, o)
		}
		return nil
	}, m.created, m.queueCapacity, m.queueSize, m.processed, m.inflight, m.exported)
	if err != nil {
		otel.Handle(fmt.Errorf("zaplens: metrics: %w", err))
		return
	}
	runtime.AddCleanup(pipe, func(r metric.Registration) { _ = r.Unregister() }, reg)
}

// report observes one reading of the pipeline's counts.
func (m *pipelineMetrics) report(pipe *pipeline.Pipeline, o metric.Observer) {
	m.obsMu.Lock()
	defer m.obsMu.Unlock()
	pipe.Observe(&m.obs)
	s := &m.obs
	o.ObserveInt64(m.created, int64(s.Emitted))
	o.ObserveInt64(m.queueCapacity, int64(s.Capacity), m.processor)
	o.ObserveInt64(m.queueSize, int64(s.Waiting), m.processor)
	o.ObserveInt64(m.processed, int64(s.HandedOn), m.processor)
	// queue_full is there from the start, at zero: an alert on its
	// increase then sees the first drops.
	o.ObserveInt64(m.processed, int64(s.Dropped-s.DroppedStopped), m.queueFull)
	if s.DroppedStopped > 0 {
		o.ObserveInt64(m.processed, int64(s.DroppedStopped), m.shutdown)
	}
	o.ObserveInt64(m.inflight, int64(s.InFlight), m.exporter)
	o.ObserveInt64(m.exported, int64(s.Exported), m.exporter)
	for _, f := range s.FailedBy {
		opt, ok := m.failed[f.Type]
		if !ok {
			attrs := append(append([]attribute.KeyValue(nil), m.exporterAttrs...), semconv.ErrorTypeKey.String(f.Type))
			opt = metric.WithAttributeSet(attribute.NewSet(attrs...))
			m.failed[f.Type] = opt
		}
		o.ObserveInt64(m.exported, int64(f.N), opt)
	}
}

// exportError is a failed OTLP export's error: the transport's, telling
// its cause as error.type and the status of the last answer.
type exportError struct {
	err    error
	cause  transport.Cause
	status string
}

func (e *exportError) Error() string { return e.err.Error() }
func (e *exportError) Unwrap() error { return e.err }

// Answered tells whether the collector refused the records for good, so
// that the spool lets them go rather than keep them for a later process.
func (e *exportError) Answered() bool {
	return e.cause == transport.Rejected || e.cause == transport.PartialSuccess
}

// ErrorType is the cause of the failure, for error.type: its name in snake
// case, or the conventions' _OTHER for a cause that names nothing.
func (e *exportError) ErrorType() string {
	if e.cause == transport.Other || e.cause == transport.Delivered {
		return pipeline.OtherErrorType
	}
	return strings.ReplaceAll(e.cause.String(), " ", "_")
}

// resultError is a transport result's error, nil when it has none.
func resultError(res transport.Result) error {
	if res.Err == nil {
		return nil
	}
	return &exportError{err: res.Err, cause: res.Cause, status: res.Status}
}
