package main

// The embedded backend: a small OTLP/gRPC server for logs and traces on
// loopback, used when OTEL_EXPORTER_OTLP_ENDPOINT is not set. It keeps what
// it receives and prints it grouped by trace, each span with its log lines
// under it: the view a tracing backend gives. It uses only the OTLP protobuf
// services and gRPC, so the example needs no Collector.

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
)

type backend struct {
	collogspb.UnimplementedLogsServiceServer

	lis net.Listener
	srv *grpc.Server

	mu    sync.Mutex
	logs  []backendLog
	spans []backendSpan
}

type backendLog struct {
	traceID, spanID string
	time            time.Time
	scope           string
	severity        string
	body            string
	attrs           []string // "key=value", in record order
	resource        string   // service.name
}

type backendSpan struct {
	traceID, spanID, parentID string
	name                      string
	start, end                time.Time
	attrs                     []string
}

// startBackend listens on 127.0.0.1 on a free port and serves OTLP/gRPC.
func startBackend() (*backend, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &backend{lis: lis, srv: grpc.NewServer()}
	collogspb.RegisterLogsServiceServer(b.srv, b)
	coltracepb.RegisterTraceServiceServer(b.srv, traceServer{b: b})
	go func() { _ = b.srv.Serve(lis) }()
	return b, nil
}

// Addr is "127.0.0.1:PORT".
func (b *backend) Addr() string { return b.lis.Addr().String() }

// Stop stops serving; what was received is kept.
func (b *backend) Stop() { b.srv.Stop() }

// Export receives logs.
func (b *backend) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, rl := range req.GetResourceLogs() {
		service := ""
		for _, kv := range rl.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				l := backendLog{
					traceID:  hex.EncodeToString(lr.GetTraceId()),
					spanID:   hex.EncodeToString(lr.GetSpanId()),
					time:     time.Unix(0, int64(lr.GetTimeUnixNano())),
					scope:    sl.GetScope().GetName(),
					severity: lr.GetSeverityText(),
					body:     formatValue(lr.GetBody()),
					resource: service,
				}
				for _, kv := range lr.GetAttributes() {
					l.attrs = append(l.attrs, formatAttr(kv))
				}
				b.logs = append(b.logs, l)
			}
		}
	}
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// traceServer adapts the backend to the trace service, whose method has the
// same name as the logs service's.
type traceServer struct {
	coltracepb.UnimplementedTraceServiceServer
	b *backend
}

func (t traceServer) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := backendSpan{
					traceID:  hex.EncodeToString(s.GetTraceId()),
					spanID:   hex.EncodeToString(s.GetSpanId()),
					parentID: hex.EncodeToString(s.GetParentSpanId()),
					name:     s.GetName(),
					start:    time.Unix(0, int64(s.GetStartTimeUnixNano())),
					end:      time.Unix(0, int64(s.GetEndTimeUnixNano())),
				}
				for _, kv := range s.GetAttributes() {
					sp.attrs = append(sp.attrs, formatAttr(kv))
				}
				t.b.spans = append(t.b.spans, sp)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// counts returns how many log records and spans arrived.
func (b *backend) counts() (logs, spans int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.logs), len(b.spans)
}

// Report prints what arrived, grouped by trace: each span (indented under its
// parent) with its log lines under it, in time order; log lines without a
// trace come last.
func (b *backend) Report(w io.Writer) {
	b.mu.Lock()
	defer b.mu.Unlock()

	logsBySpan := map[string][]backendLog{} // traceID/spanID
	var untraced []backendLog
	for _, l := range b.logs {
		if l.traceID == "" || strings.Trim(l.traceID, "0") == "" {
			untraced = append(untraced, l)
			continue
		}
		k := l.traceID + "/" + l.spanID
		logsBySpan[k] = append(logsBySpan[k], l)
	}
	for _, ls := range logsBySpan {
		sort.SliceStable(ls, func(i, j int) bool { return ls[i].time.Before(ls[j].time) })
	}

	spansByTrace := map[string][]backendSpan{}
	for _, s := range b.spans {
		spansByTrace[s.traceID] = append(spansByTrace[s.traceID], s)
	}
	// Traces that only logs know of still get a group.
	for k := range logsBySpan {
		tid := k[:strings.IndexByte(k, '/')]
		if _, ok := spansByTrace[tid]; !ok {
			spansByTrace[tid] = nil
		}
	}
	traceIDs := make([]string, 0, len(spansByTrace))
	first := map[string]time.Time{}
	for tid, ss := range spansByTrace {
		traceIDs = append(traceIDs, tid)
		var t time.Time
		for _, s := range ss {
			if t.IsZero() || s.start.Before(t) {
				t = s.start
			}
		}
		for k, ls := range logsBySpan {
			if strings.HasPrefix(k, tid+"/") && (t.IsZero() || ls[0].time.Before(t)) {
				t = ls[0].time
			}
		}
		first[tid] = t
	}
	sort.Slice(traceIDs, func(i, j int) bool { return first[traceIDs[i]].Before(first[traceIDs[j]]) })

	fmt.Fprintf(w, "=== the backend received %d spans and %d log records, grouped by trace ===\n", len(b.spans), len(b.logs))
	for _, tid := range traceIDs {
		ss := spansByTrace[tid]
		fmt.Fprintf(w, "\ntrace %s\n", tid)
		children := map[string][]backendSpan{}
		known := map[string]bool{}
		for _, s := range ss {
			known[s.spanID] = true
		}
		var roots []backendSpan
		for _, s := range ss {
			if s.parentID == "" || strings.Trim(s.parentID, "0") == "" || !known[s.parentID] {
				roots = append(roots, s)
			} else {
				children[s.parentID] = append(children[s.parentID], s)
			}
		}
		byStart := func(s []backendSpan) {
			sort.SliceStable(s, func(i, j int) bool { return s[i].start.Before(s[j].start) })
		}
		byStart(roots)
		var printSpan func(s backendSpan, depth int)
		printSpan = func(s backendSpan, depth int) {
			ind := strings.Repeat("  ", depth+1)
			fmt.Fprintf(w, "%sspan %s  %s  %s", ind, s.name, s.spanID, s.end.Sub(s.start).Round(time.Microsecond))
			if len(s.attrs) > 0 {
				fmt.Fprintf(w, "  {%s}", strings.Join(s.attrs, " "))
			}
			fmt.Fprintln(w)
			for _, l := range logsBySpan[tid+"/"+s.spanID] {
				printLog(w, ind+"  ", l)
			}
			delete(logsBySpan, tid+"/"+s.spanID)
			kids := children[s.spanID]
			byStart(kids)
			for _, c := range kids {
				printSpan(c, depth+1)
			}
		}
		for _, s := range roots {
			printSpan(s, 0)
		}
		// Log lines whose span never arrived.
		var orphanKeys []string
		for k := range logsBySpan {
			if strings.HasPrefix(k, tid+"/") {
				orphanKeys = append(orphanKeys, k)
			}
		}
		sort.Strings(orphanKeys)
		for _, k := range orphanKeys {
			fmt.Fprintf(w, "  span %s (not received)\n", k[len(tid)+1:])
			for _, l := range logsBySpan[k] {
				printLog(w, "    ", l)
			}
		}
	}
	if len(untraced) > 0 {
		fmt.Fprintf(w, "\nno trace\n")
		for _, l := range untraced {
			printLog(w, "    ", l)
		}
	}
}

func printLog(w io.Writer, ind string, l backendLog) {
	fmt.Fprintf(w, "%s%-5s %-18s %s", ind, strings.ToUpper(l.severity), l.scope, l.body)
	var shown []string
	for _, a := range l.attrs {
		if strings.HasPrefix(a, "code.") {
			continue // caller attributes: there, but noisy here
		}
		shown = append(shown, a)
	}
	if len(shown) > 0 {
		fmt.Fprintf(w, "  {%s}", strings.Join(shown, " "))
	}
	fmt.Fprintln(w)
}

func formatAttr(kv *commonpb.KeyValue) string {
	v := formatValue(kv.GetValue())
	if strings.HasSuffix(kv.GetKey(), "stacktrace") {
		n := strings.Count(strings.TrimSpace(v), "\n") + 1
		v = "<" + strconv.Itoa(n) + " lines>"
	}
	return kv.GetKey() + "=" + v
}

func formatValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', 6, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_BytesValue:
		return hex.EncodeToString(x.BytesValue)
	case *commonpb.AnyValue_ArrayValue:
		parts := make([]string, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, formatValue(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *commonpb.AnyValue_KvlistValue:
		parts := make([]string, 0, len(x.KvlistValue.GetValues()))
		for _, kv := range x.KvlistValue.GetValues() {
			parts = append(parts, formatAttr(kv))
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return ""
}
