package otlplog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zaplens/zaplens"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/otelconv"
	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/zaplens/zaplens/internal/transport"
)

// metricsVia is how a test turns the metrics on: through the variable
// and the global MeterProvider, or through WithMeterProvider.
type metricsVia int

const (
	viaVariable metricsVia = iota
	viaOption
)

func (v metricsVia) String() string { return [...]string{"variable", "option"}[v] }

// meterReader makes a MeterProvider with a ManualReader and returns the
// option that sends a provider's metrics to it, the variable's way or
// the option's.
func meterReader(t *testing.T, via metricsVia) (*sdkmetric.ManualReader, Option) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	if via == viaVariable {
		t.Setenv("OTEL_GO_X_OBSERVABILITY", "true")
		otel.SetMeterProvider(mp)
		return reader, nil
	}
	t.Setenv("OTEL_GO_X_OBSERVABILITY", "")
	return reader, WithMeterProvider(mp)
}

// eachVia runs test as a subtest once per way of turning the metrics on,
// in a clean environment, with the reader that collects them and the
// option, if any, for the provider.
func eachVia(t *testing.T, test func(t *testing.T, reader *sdkmetric.ManualReader, opt Option)) {
	for _, via := range []metricsVia{viaVariable, viaOption} {
		t.Run(via.String(), func(t *testing.T) {
			cleanEnv(t)
			reader, opt := meterReader(t, via)
			test(t, reader, opt)
		})
	}
}

// reading is one collection of a provider's metrics.
type reading struct {
	created                 int64
	processed, exported     int64            // without error.type
	processedBy, exportedBy map[string]int64 // by error.type
	inflight, size, cap     int64
	durations               map[attribute.Distinct]metricdata.HistogramDataPoint[float64]
	metrics                 map[string]metricdata.Metrics
}

func (r reading) dropped() (n int64) {
	for _, v := range r.processedBy {
		n += v
	}
	return n
}

func (r reading) failed() (n int64) {
	for _, v := range r.exportedBy {
		n += v
	}
	return n
}

// collect reads the zaplens metrics of a reader.
func collect(t *testing.T, reader *sdkmetric.ManualReader) reading {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	r := reading{processedBy: map[string]int64{}, exportedBy: map[string]int64{},
		durations: map[attribute.Distinct]metricdata.HistogramDataPoint[float64]{}, metrics: map[string]metricdata.Metrics{}}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != metricsScope {
			continue
		}
		if sm.Scope.Version != Version || sm.Scope.SchemaURL != semconv.SchemaURL {
			t.Errorf("scope %+v", sm.Scope)
		}
		for _, m := range sm.Metrics {
			r.metrics[m.Name] = m
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, dp := range h.DataPoints {
					r.durations[dp.Attributes.Equivalent()] = dp
				}
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				continue
			}
			for _, dp := range sum.DataPoints {
				et, hasErr := dp.Attributes.Value(semconv.ErrorTypeKey)
				switch m.Name {
				case otelconv.SDKLogCreated{}.Name():
					r.created += dp.Value
				case otelconv.SDKProcessorLogProcessed{}.Name():
					if hasErr {
						r.processedBy[et.AsString()] += dp.Value
					} else {
						r.processed += dp.Value
					}
				case otelconv.SDKExporterLogExported{}.Name():
					if hasErr {
						r.exportedBy[et.AsString()] += dp.Value
					} else {
						r.exported += dp.Value
					}
				case otelconv.SDKExporterLogInflight{}.Name():
					r.inflight += dp.Value
				case otelconv.SDKProcessorLogQueueSize{}.Name():
					r.size += dp.Value
				case otelconv.SDKProcessorLogQueueCapacity{}.Name():
					r.cap += dp.Value
				}
			}
		}
	}
	return r
}

// collectGRPC collects the metrics of p, exporting over gRPC to addr, and
// checks that they agree with its Stats and follow the conventions of an
// OTLP/gRPC exporter; it returns both.
func collectGRPC(t *testing.T, reader *sdkmetric.ManualReader, p *LoggerProvider, addr string) (reading, Stats) {
	t.Helper()
	r, s := collect(t, reader), p.Stats()
	checkStats(t, r, s)
	checkConventions(t, r, "otlp_grpc_log_exporter", serverOf(t, addr), semconv.RPCResponseStatusCode("OK"))
	return r, s
}

// checkStats checks the identity of a reading with Stats read at a moment
// when nothing moves: created = Emitted; processed without error.type
// plus with it = handed on + dropped; exported without error.type =
// Exported, with it = Failed.
func checkStats(t *testing.T, r reading, s Stats) {
	t.Helper()
	handedOn := int64(s.Exported+s.Failed) + r.inflight
	if r.created != int64(s.Emitted) ||
		r.processed != handedOn || r.dropped() != int64(s.Dropped) ||
		r.processed+r.dropped() != handedOn+int64(s.Dropped) ||
		r.exported != int64(s.Exported) || r.failed() != int64(s.Failed) ||
		r.inflight+r.size != int64(s.Queued) {
		t.Errorf("metrics and Stats differ:\n metrics created %d, processed %d + %v, exported %d + %v, inflight %d, queue %d\n stats %v",
			r.created, r.processed, r.processedBy, r.exported, r.exportedBy, r.inflight, r.size, s)
	}
}

// checkAddsUp checks what a reading must hold alone, at any moment.
func checkAddsUp(t *testing.T, r reading) {
	t.Helper()
	if r.created != r.processed+r.dropped()+r.size || r.processed != r.exported+r.failed()+r.inflight || r.size > r.cap+1 {
		t.Errorf("metrics do not add up: created %d, processed %d + %v, queue %d of %d, exported %d + %v, inflight %d",
			r.created, r.processed, r.processedBy, r.size, r.cap, r.exported, r.exportedBy, r.inflight)
	}
}

// checkConventions checks names, kinds, units, descriptions and attribute
// sets against the semantic conventions (otelconv is generated from them).
func checkConventions(t *testing.T, r reading, expType string, server []attribute.KeyValue, status attribute.KeyValue) {
	t.Helper()
	type want struct {
		desc, unit string
		kind       string // "counter", "updowncounter", "histogram"
	}
	wants := map[string]want{
		otelconv.SDKLogCreated{}.Name():                {otelconv.SDKLogCreated{}.Description(), otelconv.SDKLogCreated{}.Unit(), "counter"},
		otelconv.SDKProcessorLogQueueCapacity{}.Name(): {otelconv.SDKProcessorLogQueueCapacity{}.Description(), otelconv.SDKProcessorLogQueueCapacity{}.Unit(), "updowncounter"},
		otelconv.SDKProcessorLogQueueSize{}.Name():     {otelconv.SDKProcessorLogQueueSize{}.Description(), otelconv.SDKProcessorLogQueueSize{}.Unit(), "updowncounter"},
		otelconv.SDKProcessorLogProcessed{}.Name():     {otelconv.SDKProcessorLogProcessed{}.Description(), otelconv.SDKProcessorLogProcessed{}.Unit(), "counter"},
		otelconv.SDKExporterLogInflight{}.Name():       {otelconv.SDKExporterLogInflight{}.Description(), otelconv.SDKExporterLogInflight{}.Unit(), "updowncounter"},
		otelconv.SDKExporterLogExported{}.Name():       {otelconv.SDKExporterLogExported{}.Description(), otelconv.SDKExporterLogExported{}.Unit(), "counter"},
		otelconv.SDKExporterOperationDuration{}.Name(): {otelconv.SDKExporterOperationDuration{}.Description(), otelconv.SDKExporterOperationDuration{}.Unit(), "histogram"},
	}
	if len(r.metrics) != len(wants) {
		t.Errorf("%d metrics, want %d", len(r.metrics), len(wants))
	}
	// The processor's and the exporter's names share the provider's number.
	var id string
	if m, ok := r.metrics[otelconv.SDKProcessorLogQueueSize{}.Name()]; ok {
		dps := m.Data.(metricdata.Sum[int64]).DataPoints
		if len(dps) == 1 {
			name, _ := dps[0].Attributes.Value(semconv.OTelComponentNameKey)
			id = strings.TrimPrefix(name.AsString(), "batching_log_processor/")
			if _, err := strconv.Atoi(id); err != nil {
				t.Errorf("processor name %q", name.AsString())
			}
		}
	}
	processor := attribute.NewSet(semconv.OTelComponentName("batching_log_processor/"+id), semconv.OTelComponentTypeBatchingLogProcessor)
	exporterKVs := append([]attribute.KeyValue{semconv.OTelComponentName(expType + "/" + id), semconv.OTelComponentTypeKey.String(expType)}, server...)

	for name, w := range wants {
		m, ok := r.metrics[name]
		if !ok {
			t.Errorf("no %s", name)
			continue
		}
		if m.Description != w.desc || m.Unit != w.unit {
			t.Errorf("%s: description %q unit %q, want %q %q", name, m.Description, m.Unit, w.desc, w.unit)
		}
		var sets []attribute.Set
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			if w.kind == "histogram" || d.IsMonotonic != (w.kind == "counter") || d.Temporality != metricdata.CumulativeTemporality {
				t.Errorf("%s: a sum, monotonic %v, %v; want a %s", name, d.IsMonotonic, d.Temporality, w.kind)
			}
			for _, dp := range d.DataPoints {
				sets = append(sets, dp.Attributes)
			}
		case metricdata.Histogram[float64]:
			if w.kind != "histogram" {
				t.Errorf("%s: a histogram, want a %s", name, w.kind)
			}
			for _, dp := range d.DataPoints {
				sets = append(sets, dp.Attributes)
				if dp.Count == 0 || dp.Sum < 0 {
					t.Errorf("%s: %d observations summing %v", name, dp.Count, dp.Sum)
				}
			}
		default:
			t.Errorf("%s: data %T", name, m.Data)
		}
		for _, set := range sets {
			if !attributesOK(name, set, processor, exporterKVs, status) {
				t.Errorf("%s: attributes %v", name, set.ToSlice())
			}
		}
	}
}

// attributesOK tells whether a data point's attributes are those the
// conventions give the metric.
func attributesOK(name string, set, processor attribute.Set, exporterKVs []attribute.KeyValue, status attribute.KeyValue) bool {
	with := func(base []attribute.KeyValue, kvs ...attribute.KeyValue) *attribute.Set {
		s := attribute.NewSet(append(append([]attribute.KeyValue(nil), base...), kvs...)...)
		return &s
	}
	et, hasErr := set.Value(semconv.ErrorTypeKey)
	errKV := semconv.ErrorTypeKey.String(et.AsString())
	exporter := with(exporterKVs)
	switch name {
	case otelconv.SDKLogCreated{}.Name():
		return set.Len() == 0
	case otelconv.SDKProcessorLogQueueCapacity{}.Name(), otelconv.SDKProcessorLogQueueSize{}.Name():
		return set.Equals(&processor)
	case otelconv.SDKProcessorLogProcessed{}.Name():
		if !hasErr {
			return set.Equals(&processor)
		}
		return (et.AsString() == "queue_full" || et.AsString() == "already_shutdown") && set.Equals(with(processor.ToSlice(), errKV))
	case otelconv.SDKExporterLogInflight{}.Name():
		return set.Equals(exporter)
	case otelconv.SDKExporterLogExported{}.Name():
		if !hasErr {
			return set.Equals(exporter)
		}
		return set.Equals(with(exporterKVs, errKV))
	case otelconv.SDKExporterOperationDuration{}.Name():
		if !hasErr {
			if status.Key == "" {
				return set.Equals(exporter)
			}
			return set.Equals(with(exporterKVs, status))
		}
		if st, ok := set.Value(status.Key); ok && status.Key != "" {
			return set.Equals(with(exporterKVs, attribute.KeyValue{Key: status.Key, Value: st}, errKV))
		}
		return set.Equals(with(exporterKVs, errKV))
	}
	return false
}

// serverOf is server.address and server.port of a loopback listener.
func serverOf(t *testing.T, addr string) []attribute.KeyValue {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return []attribute.KeyValue{semconv.ServerAddress(host), semconv.ServerPort(n)}
}

func flush(t *testing.T, p *LoggerProvider) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return p.ForceFlush(ctx)
}

// After a burst to a healthy collector, every record is created,
// processed and exported, and the metrics say so as Stats does.
func TestMetricsHealthyBurst(t *testing.T) {
	eachVia(t, func(t *testing.T, reader *sdkmetric.ManualReader, opt Option) {
		srv := startOTLPServer(t, "127.0.0.1:0")
		p := newTestProvider(t, WithEndpoint("http://"+srv.Addr), opt)
		r := collect(t, reader)
		checkStats(t, r, p.Stats())
		if r.created != 0 || r.processedBy["queue_full"] != 0 || len(r.metrics) != 6 {
			t.Errorf("before any record: %+v", r)
		}
		emit(p, 5000)
		if err := flush(t, p); err != nil {
			t.Fatal(err)
		}
		r, s := collectGRPC(t, reader, p, srv.Addr)
		if s != (Stats{Emitted: 5000, Exported: 5000}) || r.dropped()+r.failed() != 0 || r.size != 0 || r.cap <= 0 {
			t.Errorf("stats %v, reading %+v", s, r)
		}
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		// A provider shut down but held still reports its counts.
		collectGRPC(t, reader, p, srv.Addr)
	})
}

// A burst that overflows the queue: the drops are processed with
// error.type queue_full; a record the stopped pipeline refuses, with
// already_shutdown.
func TestMetricsQueueOverflow(t *testing.T) {
	eachVia(t, func(t *testing.T, reader *sdkmetric.ManualReader, opt Option) {
		srv := startOTLPServer(t, "127.0.0.1:0")
		p := newTestProvider(t, WithEndpoint("http://"+srv.Addr), WithQueueBytes(32<<10), opt)
		emit(p, 20000)
		checkAddsUp(t, collect(t, reader))
		if err := flush(t, p); err != nil {
			t.Fatal(err)
		}
		r, s := collectGRPC(t, reader, p, srv.Addr)
		if s.Dropped == 0 || r.processedBy["queue_full"] != int64(s.Dropped) || s.Exported+s.Dropped != 20000 {
			t.Errorf("stats %v, processed by error %v", s, r.processedBy)
		}

		_ = p.Shutdown(context.Background()) // a DeliveryError: the drops
		// The provider's loggers are off now; a record that reaches the
		// pipeline anyway (one racing with Shutdown) is refused.
		p.pipe.Enqueue(0, []byte{}, false)
		r, _ = collectGRPC(t, reader, p, srv.Addr)
		if r.processedBy["already_shutdown"] != 1 || r.processedBy["queue_full"] != int64(s.Dropped) {
			t.Errorf("after the stop: processed by error %v", r.processedBy)
		}
	})
}

// With the collector down, the records fail: exported with error.type
// refused, the duration with the gRPC status and error.type.
func TestMetricsCollectorDown(t *testing.T) {
	eachVia(t, func(t *testing.T, reader *sdkmetric.ManualReader, opt Option) {
		addr := freeAddr(t)
		p := newTestProvider(t, WithEndpoint("http://"+addr), opt)
		emit(p, 1000)
		if err := flush(t, p); err == nil {
			t.Error("flush to a collector that is down reported no error")
		}
		r, s := collectGRPC(t, reader, p, addr)
		if s.Failed != 1000 || r.exportedBy["refused"] != 1000 || r.exported != 0 {
			t.Errorf("stats %v, exported by error %v", s, r.exportedBy)
		}
		refused := attribute.NewSet(append(r.exporterKVs(t),
			semconv.RPCResponseStatusCode("UNAVAILABLE"), semconv.ErrorTypeKey.String("refused"))...)
		if dp, ok := r.durations[refused.Equivalent()]; !ok || dp.Count == 0 {
			t.Errorf("no duration with %v: %v", refused.ToSlice(), r.durations)
		}
		_ = p.Shutdown(context.Background())
		checkStats(t, collect(t, reader), p.Stats())
	})
}

// exporterKVs are the exporter's attributes as the inflight metric has them.
func (r reading) exporterKVs(t *testing.T) []attribute.KeyValue {
	t.Helper()
	m, ok := r.metrics[otelconv.SDKExporterLogInflight{}.Name()]
	if !ok {
		t.Fatal("no inflight metric")
	}
	return m.Data.(metricdata.Sum[int64]).DataPoints[0].Attributes.ToSlice()
}

// Under load, with the collector up and down: every collection adds up on
// its own, and lies between the Stats read before and after it; once the
// load stops, it equals them.
func TestMetricsIdentityUnderLoad(t *testing.T) {
	for _, down := range []bool{false, true} {
		t.Run(map[bool]string{false: "collector up", true: "collector down"}[down], func(t *testing.T) {
			cleanEnv(t)
			reader, opt := meterReader(t, viaOption)
			addr, timeout := freeAddr(t), 200*time.Millisecond // each batch may take it
			if !down {
				addr, timeout = startOTLPServer(t, "127.0.0.1:0").Addr, time.Second
			}
			p := newTestProvider(t, WithEndpoint("http://"+addr), WithQueueBytes(1<<20),
				WithScheduleDelay(5*time.Millisecond), WithOTLPTimeout(timeout), opt)
			// Four producers, in bursts, for a second and a half.
			var wg sync.WaitGroup
			var emitted atomic.Uint64
			stop := time.Now().Add(1500 * time.Millisecond)
			for range 4 {
				wg.Go(func() {
					for time.Now().Before(stop) {
						emit(p, 500)
						emitted.Add(500)
						time.Sleep(2 * time.Millisecond)
					}
				})
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			collections := 0
			for loop := true; loop; collections++ {
				select {
				case <-done:
					loop = false
				default:
				}
				before := p.Stats()
				r := collect(t, reader)
				after := p.Stats()
				checkAddsUp(t, r)
				between := func(what string, b, v, a uint64) {
					if v < b || v > a {
						t.Errorf("%s %d not within the Stats read before (%d) and after (%d)", what, v, b, a)
					}
				}
				between("created", before.Emitted, uint64(r.created), after.Emitted)
				between("exported", before.Exported, uint64(r.exported), after.Exported)
				between("failed", before.Failed, uint64(r.failed()), after.Failed)
				between("dropped", before.Dropped, uint64(r.dropped()), after.Dropped)
				time.Sleep(time.Millisecond)
			}
			_ = flush(t, p)
			r := collect(t, reader)
			s := p.Stats()
			checkStats(t, r, s)
			if s.Emitted != emitted.Load() || (down && s.Exported != 0) || (!down && s.Exported == 0) {
				t.Errorf("stats %v", s)
			}
			t.Logf("%d collections under load; %v; failed by %v", collections, s, r.exportedBy)
			_ = p.Shutdown(context.Background())
			checkStats(t, collect(t, reader), p.Stats())
		})
	}
}

// OTLP/HTTP: its component type, and http.response.status_code on the
// duration.
func TestMetricsHTTP(t *testing.T) {
	cleanEnv(t)
	reader, opt := meterReader(t, viaOption)
	var mu sync.Mutex
	code := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		c := code
		mu.Unlock()
		b, _ := proto.Marshal(&collogpb.ExportLogsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(c)
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	p := newTestProvider(t, WithProtocol("http/protobuf"), WithEndpoint(srv.URL), opt)
	emit(p, 100)
	if err := flush(t, p); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	code = http.StatusBadRequest
	mu.Unlock()
	emit(p, 50)
	_ = flush(t, p)
	r := collect(t, reader)
	s := p.Stats()
	checkStats(t, r, s)
	if s.Exported != 100 || r.exportedBy["rejected"] != 50 {
		t.Errorf("stats %v, exported by error %v", s, r.exportedBy)
	}
	server := serverOf(t, strings.TrimPrefix(srv.URL, "http://"))
	checkConventions(t, r, "otlp_http_log_exporter", server, semconv.HTTPResponseStatusCode(200))
	rejected := attribute.NewSet(append(r.exporterKVs(t), semconv.HTTPResponseStatusCode(400), semconv.ErrorTypeKey.String("rejected"))...)
	if _, ok := r.durations[rejected.Equivalent()]; !ok {
		t.Errorf("no duration with %v", rejected.ToSlice())
	}
	_ = p.Shutdown(context.Background())
}

// The console exporter is no component of the conventions: its type is
// its Go name, as stdoutlog's is, and it has no server.
func TestMetricsConsole(t *testing.T) {
	cleanEnv(t)
	reader, opt := meterReader(t, viaOption)
	p := newTestProvider(t, WithExporterName("console"), WithConsoleWriter(&strings.Builder{}), opt)
	emit(p, 10)
	if err := flush(t, p); err != nil {
		t.Fatal(err)
	}
	r := collect(t, reader)
	checkStats(t, r, p.Stats())
	checkConventions(t, r, consoleComponentType, nil, attribute.KeyValue{})
	_ = p.Shutdown(context.Background())
}

// Off, there are none: without the variable and the option, with the
// variable other than true; its older name turns them on too.
func TestMetricsOff(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		key, value string
		on         bool
	}{
		{"OTEL_GO_X_OBSERVABILITY", "", false},
		{"OTEL_GO_X_OBSERVABILITY", "false", false},
		{"OTEL_GO_X_OBSERVABILITY", "1", false},
		{"OTEL_GO_X_OBSERVABILITY", "TRUE", true},
		{"OTEL_GO_X_SELF_OBSERVABILITY", "true", true},
	} {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		otel.SetMeterProvider(mp)
		t.Setenv("OTEL_GO_X_OBSERVABILITY", "")
		t.Setenv("OTEL_GO_X_SELF_OBSERVABILITY", "")
		t.Setenv(tc.key, tc.value)
		p := newTestProvider(t, withExporter(&memExporter{}))
		emit(p, 10)
		_ = flush(t, p)
		r := collect(t, reader)
		if on := len(r.metrics) > 0; on != tc.on {
			t.Errorf("%s=%q: metrics on %v, want %v", tc.key, tc.value, on, tc.on)
		}
		if tc.on {
			checkStats(t, r, p.Stats())
		}
		_ = p.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	}
}

// A provider shut down and dropped leaves no callback behind.
func TestMetricsLeaveWithTheProvider(t *testing.T) {
	cleanEnv(t)
	reader, opt := meterReader(t, viaOption)
	func() {
		p := newTestProvider(t, withExporter(&memExporter{}), opt)
		emit(p, 10)
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := collect(t, reader); r.created != 10 {
			t.Errorf("after Shutdown: created %d", r.created)
		}
	}()
	created := otelconv.SDKLogCreated{}.Name()
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		if _, ok := collect(t, reader).metrics[created]; !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the provider's callback is still registered")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Metrics on cost the logging call no allocation. (Its time is for
// BenchmarkMetricsCall: see the README.)
func TestAllocationsMetrics(t *testing.T) {
	skipAllocsUnderRace(t)
	cleanEnv(t)
	ctx, _ := spanContext(t)
	fields := caseOneFields(ctx)
	allocs := map[bool]float64{}
	for _, on := range []bool{false, true} {
		opts := []Option{withDiscardExport()}
		if on {
			reader := sdkmetric.NewManualReader()
			opts = append(opts, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		}
		p := newTestProvider(t, opts...)
		logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
		allocs[on] = testing.AllocsPerRun(2000, func() { logger.Info("step done", fields...) })
		_ = p.Shutdown(context.Background())
	}
	if allocs[true] != allocs[false] {
		t.Errorf("allocations per line: %v with metrics, %v without", allocs[true], allocs[false])
	}
}

// collectEvery collects reader's metrics every d, as a periodic reader
// would, until the returned stop is called.
func collectEvery(reader *sdkmetric.ManualReader, d time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(d)
		defer tick.Stop()
		var rm metricdata.ResourceMetrics
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = reader.Collect(context.Background(), &rm)
			}
		}
	}()
	return func() { close(done) }
}

// BenchmarkMetricsCall is the logging call with the metrics off and on
// (a collection every 10 ms meanwhile), each on a provider of its own
// whose export discards the requests:
//
//	go test -run '^$' -bench BenchmarkMetricsCall -count 10 . | tee bench.txt
//	benchstat -col /metrics bench.txt
func BenchmarkMetricsCall(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	fields := caseOneFields(ctx)
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "metrics=off", true: "metrics=on"}[on], func(b *testing.B) {
			opts := []Option{WithLossWriter(nil), withDiscardExport()}
			if on {
				reader := sdkmetric.NewManualReader()
				opts = append(opts, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
				defer collectEvery(reader, 10*time.Millisecond)()
			}
			p, err := NewLoggerProvider(context.Background(), opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Shutdown(context.Background())
			logger := zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
			b.ReportAllocs()
			for b.Loop() {
				logger.Info("step done", fields...)
			}
			_ = p.ForceFlush(context.Background())
			if s := p.Stats(); s.Dropped > 0 {
				b.ReportMetric(float64(s.Dropped)/float64(s.Emitted), "dropped/line")
			}
		})
	}
}

// BenchmarkMetricsCallPaired logs to two providers, metrics off and on (a
// collection every 10 ms), in alternate blocks of 1000 lines, so that
// whatever else the machine runs falls on both alike; it reports the time
// per line of each and their ratio:
//
//	go test -run '^$' -bench BenchmarkMetricsCallPaired -count 10 . | tee paired.txt
//	benchstat paired.txt
func BenchmarkMetricsCallPaired(b *testing.B) {
	cleanEnv(b)
	ctx, _ := spanContext(b)
	fields := caseOneFields(ctx)
	reader := sdkmetric.NewManualReader()
	defer collectEvery(reader, 10*time.Millisecond)()
	var loggers [2]*zap.Logger
	var providers [2]*LoggerProvider
	for i, on := range []bool{false, true} {
		opts := []Option{WithLossWriter(nil), withDiscardExport()}
		if on {
			opts = append(opts, WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		}
		p, err := NewLoggerProvider(context.Background(), opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Shutdown(context.Background())
		providers[i], loggers[i] = p, zap.New(zaplens.NewCore(zaplens.WithLoggerProvider(p)))
	}
	const block = 1000
	var spent [2]time.Duration
	var lines [2]int
	n := 0
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		which := (n / block) % 2
		loggers[which].Info("step done", fields...)
		if n++; n%block == 0 {
			now := time.Now()
			spent[which] += now.Sub(start)
			lines[which] += block
			start = now
		}
	}
	if lines[0] == 0 || lines[1] == 0 {
		return // too few lines for a block of each
	}
	off := float64(spent[0].Nanoseconds()) / float64(lines[0])
	on := float64(spent[1].Nanoseconds()) / float64(lines[1])
	b.ReportMetric(off, "off-ns/line")
	b.ReportMetric(on, "on-ns/line")
	b.ReportMetric(on/off, "on/off")
	for _, p := range providers {
		if s := p.Stats(); s.Dropped > 0 {
			b.Logf("dropped %d of %d lines", s.Dropped, s.Emitted)
		}
	}
}

// Every cause of a failed export has an error.type of its own, in snake
// case, but Other's, which is the conventions' _OTHER.
func TestCauseErrorTypes(t *testing.T) {
	seen := map[string]transport.Cause{}
	for c := transport.Delivered + 1; !strings.HasPrefix(c.String(), "Cause("); c++ {
		et := (&exportError{cause: c}).ErrorType()
		if prev, dup := seen[et]; dup || et == "" || strings.Contains(et, " ") || (et == "_OTHER") != (c == transport.Other) {
			t.Errorf("cause %v: error.type %q (also %v's)", c, et, prev)
		}
		seen[et] = c
	}
	if et := (&exportError{cause: transport.Cause(99)}).ErrorType(); et != "Cause(99)" {
		t.Errorf("unknown cause: %q", et)
	}
}
