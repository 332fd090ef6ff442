package benchmarks

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// BenchmarkReceiverDecode is what a receiver spends decoding one request
// of 8,192 records of case 1's shape (a message, five attributes, trace and
// span ids): decode=collector is the Collector's pdata, as cmd/otlpsink
// decodes; decode=generated is proto.Unmarshal into the generated types of
// go.opentelemetry.io/proto/otlp, as the sink did before 2026-11-30.
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
			for b.Loop() {
				if err := dc.decode(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
		})
	}
}

// caseOneRequest is an encoded export request of n records like case 1's.
func caseOneRequest(tb testing.TB, n int) []byte {
	tb.Helper()
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	num := func(k string, v int64) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
	}
	sl := &logspb.ScopeLogs{Scope: &commonpb.InstrumentationScope{Name: "bench"}}
	for i := range n {
		sl.LogRecords = append(sl.LogRecords, &logspb.LogRecord{
			TimeUnixNano: uint64(i), ObservedTimeUnixNano: uint64(i),
			SeverityNumber: logspb.SeverityNumber_SEVERITY_NUMBER_INFO, SeverityText: "info",
			Body:       &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "request handled"}},
			Attributes: []*commonpb.KeyValue{str("method", "GET"), str("path", "/api/v1/items"), num("status", 200), num("bytes", 5123), str("user", "someone")},
			TraceId:    make([]byte, 16), SpanId: make([]byte, 8), Flags: 1,
		})
	}
	req := &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{ScopeLogs: []*logspb.ScopeLogs{sl}}}}
	data, err := proto.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
