package otlpwire

import (
	"context"
	"math"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// The oracle of these tests is the SDK's own pipeline: sdk/log, a simple
// processor and otlploggrpc send each case to a real OTLP/gRPC receiver on
// loopback, and what it receives must equal what this package writes for
// the same resource, scope, limits and record.

// receiver is an OTLP/gRPC logs endpoint that keeps what it is sent.
type receiver struct {
	collogspb.UnimplementedLogsServiceServer
	mu   sync.Mutex
	reqs []*collogspb.ExportLogsServiceRequest
}

func (r *receiver) Export(_ context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return &collogspb.ExportLogsServiceResponse{}, nil
}

// take returns the requests received since the last take.
func (r *receiver) take() []*collogspb.ExportLogsServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs := r.reqs
	r.reqs = nil
	return reqs
}

// sdkExporter starts a receiver and returns it with an otlploggrpc
// exporter that sends to it.
func sdkExporter(t *testing.T) (*receiver, sdklog.Exporter) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	recv := &receiver{}
	srv := grpc.NewServer()
	collogspb.RegisterLogsServiceServer(srv, recv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	exp, err := otlploggrpc.New(context.Background(), otlploggrpc.WithInsecure(),
		otlploggrpc.WithEndpoint(lis.Addr().String()), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return recv, exp
}

// sdkCase is one record, with the resource, scope and limits it is sent
// under. The resource's and the scope's attributes are sorted and unique,
// as the SDK keeps them; the record's keys are unique.
type sdkCase struct {
	name                     string
	res                      []attribute.KeyValue
	resURL                   string
	scope, version, scopeURL string
	scopeAttrs               []attribute.KeyValue
	count, length            int // the SDK's limits: attributes, value length
	rec                      Record
	attrs                    []attribute.KeyValue
}

// sdkSend has the SDK send c, and returns what the receiver decoded.
func sdkSend(t *testing.T, recv *receiver, exp sdklog.Exporter, c sdkCase) *collogspb.ExportLogsServiceRequest {
	t.Helper()
	lp := sdklog.NewLoggerProvider(
		sdklog.WithResource(resource.NewWithAttributes(c.resURL, c.res...)),
		sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)),
		sdklog.WithAttributeCountLimit(c.count),
		sdklog.WithAttributeValueLengthLimit(c.length))
	logger := lp.Logger(c.scope, log.WithInstrumentationVersion(c.version), log.WithSchemaURL(c.scopeURL),
		log.WithInstrumentationAttributes(c.scopeAttrs...))
	var r log.Record
	r.SetTimestamp(c.rec.Time)
	r.SetObservedTimestamp(c.rec.Observed)
	r.SetSeverity(c.rec.Severity)
	r.SetSeverityText(c.rec.SeverityText)
	r.SetEventName(c.rec.EventName)
	r.SetBody(c.rec.Body)
	r.AddAttributes(c.attrs...)
	logger.Emit(context.Background(), r) // the simple processor exports before Emit returns
	reqs := recv.take()
	if len(reqs) != 1 {
		t.Fatalf("%s: the SDK sent %d requests, want 1", c.name, len(reqs))
	}
	return reqs[0]
}

// wireSend is what this package writes for c, decoded.
func wireSend(t *testing.T, c sdkCase) *collogspb.ExportLogsServiceRequest {
	t.Helper()
	lim := Limits{AttributeCount: c.count, ValueLength: c.length, UniqueMaps: true}
	rec := AppendRecord(nil, &c.rec, c.attrs, lim)
	var w Request
	w.Reset(NewResource(c.res, c.resURL), []Scope{NewScope(c.scope, c.version, c.scopeURL, c.scopeAttrs)}, math.MaxInt)
	w.Add(0, rec)
	return decode(t, w.Bytes())
}

// nested is v inside depth levels of slices and maps, alternately.
func nested(v attribute.Value, depth int) attribute.Value {
	for i := range depth {
		if i%2 == 0 {
			v = attribute.SliceValue(v, attribute.IntValue(i))
		} else {
			v = attribute.MapValue(attribute.KeyValue{Key: "k", Value: v}, attribute.Int("n", i))
		}
	}
	return v
}

// sdkCases are the cases: severities in and out of range, scopes and
// resources of each field alone, long values and deep ones in every place,
// and the limits at their edges.
func sdkCases() []sdkCase {
	now := time.Unix(1700000000, 5)
	base := sdkCase{count: 128, length: -1, rec: Record{Time: now, Observed: now.Add(time.Second),
		Severity: log.SeverityInfo, SeverityText: "info", Body: attribute.StringValue("m")}}
	long := strings.Repeat("long", 80)
	deep := nested(attribute.StringValue(long), maxDepth+3)
	values := []attribute.KeyValue{
		attribute.String("s", long), attribute.StringSlice("ss", []string{long, "ab"}),
		{Key: "b", Value: attribute.ByteSliceValue([]byte(long))},
		attribute.Map("m", attribute.String("k", long), attribute.Int("n", 1), attribute.String("k", "last")),
		{Key: "deep", Value: deep}, attribute.Int("i", -1), attribute.Bool("t", true),
	}
	var cases []sdkCase
	add := func(name string, change func(c *sdkCase)) {
		c := base
		c.name = name
		change(&c)
		cases = append(cases, c)
	}
	for s := log.Severity(-1); s <= log.SeverityFatal4+2; s++ {
		add("severity "+s.String(), func(c *sdkCase) { c.rec.Severity = s })
	}
	add("zero times", func(c *sdkCase) { c.rec.Time, c.rec.Observed = time.Time{}, time.Unix(0, 0) })
	add("time before 1970", func(c *sdkCase) { c.rec.Time = time.Unix(-5, 0) })
	add("event name", func(c *sdkCase) { c.rec.EventName = "ev" })
	add("empty scope", func(*sdkCase) {})
	add("scope name", func(c *sdkCase) { c.scope = "n" })
	add("scope version", func(c *sdkCase) { c.version = "v1" })
	add("scope schema URL", func(c *sdkCase) { c.scopeURL = "https://scope" })
	add("scope attributes", func(c *sdkCase) {
		set := attribute.NewSet(values...) // sorted, as the SDK's scope keeps them
		c.scopeAttrs = set.ToSlice()
	})
	add("scope attribute without a key", func(c *sdkCase) { c.scopeAttrs = []attribute.KeyValue{{Value: attribute.IntValue(1)}} })
	add("resource schema URL", func(c *sdkCase) { c.resURL = "https://res" })
	add("resource attributes", func(c *sdkCase) {
		c.res = []attribute.KeyValue{{Key: "deep", Value: deep}, attribute.String("service.name", long)}
	})
	add("attributes, no limits", func(c *sdkCase) { c.attrs, c.count = values, -1 })
	for _, n := range []int{0, 1, 2} {
		add("attribute count limit", func(c *sdkCase) { c.attrs, c.count = values, n })
		add("value length limit", func(c *sdkCase) { c.attrs, c.length = values, n })
		add("body under a value length limit", func(c *sdkCase) {
			c.rec.Body, c.length = attribute.MapValue(values...), n
		})
	}
	add("deep body", func(c *sdkCase) { c.rec.Body = deep })
	add("slice body", func(c *sdkCase) { c.rec.Body = attribute.StringSliceValue([]string{long}) })
	return cases
}

// What this package writes is what the SDK sends, case by case.
func TestMatchesSDK(t *testing.T) {
	recv, exp := sdkExporter(t)
	for _, c := range sdkCases() {
		want := sdkSend(t, recv, exp, c)
		if got := wireSend(t, c); !proto.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, prototext.Format(got), prototext.Format(want))
		}
	}
}
