package benchmarks

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// BenchmarkReceiverDecode is what a receiver spends decoding one request
// of 8,192 records of case 1's line (caseOneRequest: "step done", step,
// loss, lr, tokens, phase, trace and span ids): decode=collector is the
// Collector's pdata, as cmd/otlpsink decodes; decode=generated is
// proto.Unmarshal into the generated types of go.opentelemetry.io/proto/otlp,
// as the sink did before 2026-11-30.
// ns/record is wall time; cpu-ns/record the process's CPU time (getrusage,
// the garbage collector's included), which load from other processes on a
// shared machine moves less.
func BenchmarkReceiverDecode(b *testing.B) {
	const records = 8192
	data := caseOneRequest(b, records)
	decoders := []struct {
		name   string
		decode func([]byte) error
	}{
		{"collector", func(d []byte) error { return plogotlp.NewExportRequest().UnmarshalProto(d) }},
		{"generated", func(d []byte) error { return proto.Unmarshal(d, &collogspb.ExportLogsServiceRequest{}) }},
	}
	for _, dc := range decoders {
		b.Run("decode="+dc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			cpu0 := cpuTime()
			for b.Loop() {
				if err := dc.decode(data); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*records), "cpu-ns/record")
		})
	}
}

// caseOneRequest is an encoded export request of n records of case 1's
// line (info5): body "step done", the attributes attrs5 gives (step,
// loss, lr, tokens, phase), traceCtx's trace and span ids, sampled.
func caseOneRequest(tb testing.TB, n int) []byte {
	tb.Helper()
	sc := trace.SpanContextFromContext(traceCtx)
	tid, sid := sc.TraceID(), sc.SpanID()
	sl := &logspb.ScopeLogs{Scope: &commonpb.InstrumentationScope{Name: "github.com/zaplens/zaplens/benchmarks"}}
	for i := range n {
		var attrs []*commonpb.KeyValue
		for _, kv := range attrs5(i) {
			attrs = append(attrs, &commonpb.KeyValue{Key: string(kv.Key), Value: anyValue(tb, kv.Value)})
		}
		sl.LogRecords = append(sl.LogRecords, &logspb.LogRecord{
			TimeUnixNano: uint64(i), ObservedTimeUnixNano: uint64(i),
			SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO, SeverityText: "info",
			Body:       &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "step done"}},
			Attributes: attrs,
			TraceId:    tid[:], SpanId: sid[:], Flags: uint32(sc.TraceFlags()),
		})
	}
	req := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{sl}}}}
	data, err := proto.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// anyValue is v as OTLP's AnyValue, for the kinds attrs5 uses.
func anyValue(tb testing.TB, v attribute.Value) *commonpb.AnyValue {
	switch v.Type() {
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	}
	tb.Fatalf("attribute of kind %v", v.Type())
	return nil
}
