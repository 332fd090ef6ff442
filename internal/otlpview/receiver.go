// Package otlpview receives OTLP logs and traces, over gRPC and HTTP, and
// prints them: a line per log record as it arrives, or all grouped by trace.
package otlpview

import (
	"context"
	"encoding/hex"
	"sync"
	"time"

	"go.opentelemetry.io/otel/log"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/grpc"
)

// Log is one log record as received.
type Log struct {
	// TraceID and SpanID are the record's ids in lower-case hex: "" when
	// the record has none, all zeros when it sent zeros.
	TraceID, SpanID string
	// Time is the record's timestamp, or its observed timestamp when it has
	// none.
	Time time.Time
	// Service is the service.name of the record's resource.
	Service string
	// Scope is the name of the record's instrumentation scope.
	Scope string
	// Severity is the record's severity text, or the name of its severity
	// number (INFO, WARN2, ...) when it has no text.
	Severity string
	// Body is the record's body.
	Body *commonpb.AnyValue
	// Attributes are the record's attributes, in record order.
	Attributes []*commonpb.KeyValue
	// Resource is the attributes of the record's resource, in their order.
	Resource []*commonpb.KeyValue
}

// Span is one span as received.
type Span struct {
	// TraceID, SpanID and ParentID are the span's ids in lower-case hex;
	// ParentID is "" for a root span.
	TraceID, SpanID, ParentID string
	// Name is the span's name.
	Name string
	// Start and End are when the span started and ended.
	Start, End time.Time
	// Service is the service.name of the span's resource.
	Service string
	// Attributes are the span's attributes, in span order.
	Attributes []*commonpb.KeyValue
}

// Receiver keeps the log records and spans exported to it, for [Receiver.Report].
// Serve it with [Listen], or register it on servers of your own with
// [Receiver.RegisterGRPC] and [Receiver.ServeHTTP]. Set its fields before
// it receives anything. The zero Receiver is ready to use.
type Receiver struct {
	// OnLog, when set, is called with each log record as it arrives, one
	// call at a time, in arrival order. It runs under the Receiver's lock:
	// it must not call the Receiver's methods.
	OnLog func(Log)
	// Keep bounds how many log records, and how many spans, are kept for
	// the report: past it the oldest are let go. 0 keeps everything.
	Keep int

	mu           sync.Mutex
	logs         []Log
	spans        []Span
	nlogs, nspan int // received, kept or not
}

// RegisterGRPC registers the OTLP/gRPC logs and trace services on s.
func (r *Receiver) RegisterGRPC(s *grpc.Server) {
	collogspb.RegisterLogsServiceServer(s, logsServer{r: r})
	coltracepb.RegisterTraceServiceServer(s, traceServer{r: r})
}

// Counts returns how many log records and spans arrived, kept or not.
func (r *Receiver) Counts() (logs, spans int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nlogs, r.nspan
}

// Logs returns the log records kept, in arrival order.
func (r *Receiver) Logs() []Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Log(nil), r.logs...)
}

// Spans returns the spans kept, in arrival order.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// ExportLogs takes the log records of one export request. It keeps
// references into req, which must not change afterwards.
func (r *Receiver) ExportLogs(req *collogspb.ExportLogsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rl := range req.GetResourceLogs() {
		service := serviceName(rl.GetResource())
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				ts := lr.GetTimeUnixNano()
				if ts == 0 {
					ts = lr.GetObservedTimeUnixNano()
				}
				l := Log{
					TraceID:    hex.EncodeToString(lr.GetTraceId()),
					SpanID:     hex.EncodeToString(lr.GetSpanId()),
					Time:       time.Unix(0, int64(ts)),
					Service:    service,
					Scope:      sl.GetScope().GetName(),
					Severity:   lr.GetSeverityText(),
					Body:       lr.GetBody(),
					Attributes: lr.GetAttributes(),
					Resource:   rl.GetResource().GetAttributes(),
				}
				if l.Severity == "" {
					l.Severity = severityName(int32(lr.GetSeverityNumber()))
				}
				r.nlogs++
				r.logs = keep(r.logs, l, r.Keep)
				if r.OnLog != nil {
					r.OnLog(l)
				}
			}
		}
	}
}

// ExportTraces takes the spans of one export request. It keeps references
// into req, which must not change afterwards.
func (r *Receiver) ExportTraces(req *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := serviceName(rs.GetResource())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.nspan++
				r.spans = keep(r.spans, Span{
					TraceID:    hex.EncodeToString(s.GetTraceId()),
					SpanID:     hex.EncodeToString(s.GetSpanId()),
					ParentID:   hex.EncodeToString(s.GetParentSpanId()),
					Name:       s.GetName(),
					Start:      time.Unix(0, int64(s.GetStartTimeUnixNano())),
					End:        time.Unix(0, int64(s.GetEndTimeUnixNano())),
					Service:    service,
					Attributes: s.GetAttributes(),
				}, r.Keep)
			}
		}
	}
}

// keep appends v to s, letting the oldest go past limit (0: no bound).
// The kept part is copied to a new array when append would grow the old
// one, so memory stays within about twice limit.
func keep[T any](s []T, v T, limit int) []T {
	if limit > 0 && len(s) >= limit {
		if len(s) == cap(s) {
			s = append(make([]T, 0, 2*limit), s[len(s)-limit+1:]...)
		} else {
			s = s[len(s)-limit+1:]
		}
	}
	return append(s, v)
}

func serviceName(res *resourcepb.Resource) string {
	for _, kv := range res.GetAttributes() {
		if kv.GetKey() == "service.name" {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// severityName names an OTLP severity number as the OTel log API does:
// TRACE, TRACE2 ... FATAL4; "" for none.
func severityName(n int32) string {
	if n < int32(log.SeverityTrace1) || n > int32(log.SeverityFatal4) {
		return ""
	}
	return log.Severity(n).String()
}

// logsServer is the OTLP/gRPC logs service of a Receiver.
type logsServer struct {
	collogspb.UnimplementedLogsServiceServer
	r *Receiver
}

func (s logsServer) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	s.r.ExportLogs(req)
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// traceServer is the OTLP/gRPC trace service of a Receiver: a type of its
// own, as its method has the same name as the logs service's.
type traceServer struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceServer) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.ExportTraces(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}
