package zaplens

import (
	"context"
	"testing"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// diffFixedRecords emits the same few records to p, with every time set,
// through the logs API and through the bridge.
func diffFixedRecords(p log.LoggerProvider) {
	ts := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	l := p.Logger("resource.test")
	for i := range 3 {
		var r log.Record
		r.SetTimestamp(ts.Add(time.Duration(i)))
		r.SetObservedTimestamp(ts)
		r.SetSeverity(log.SeverityWarn)
		r.SetBody(attribute.StringValue("record"))
		r.AddAttributes(attribute.Int("i", i))
		l.Emit(context.Background(), r)
	}
	b := newDiffBridges(p, newDiffClock())
	b.core.Info("bridged")
}

// TestWithResourceMatchesSDK: otlplog.WithResource(r) on ours and sdklog.WithResource(r)
// on the SDK's provider put the same resource, attributes and schema URL,
// on the wire, with the environment set or not, conflicting or not.
func TestWithResourceMatchesSDK(t *testing.T) {
	ctx := context.Background()
	// A TracerProvider's resource as a program builds it: detectors, its
	// own attributes, a schema URL.
	detected, err := resource.New(ctx,
		resource.WithTelemetrySDK(), resource.WithHost(), resource.WithProcessPID(),
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName("tracer-service"), attribute.String("team", "traces"),
			attribute.String("k8s.pod.name", "pod-1")))
	if err != nil {
		t.Fatal(err)
	}
	schemaless := resource.NewSchemaless(attribute.String("team", "schemaless"), attribute.Int("n", 3))
	for _, tc := range []struct {
		name     string
		res      *resource.Resource
		attrs    string // OTEL_RESOURCE_ATTRIBUTES
		service  string // OTEL_SERVICE_NAME
		wantTeam string
	}{
		{name: "no environment", res: detected, wantTeam: "traces"},
		{name: "environment under the resource", res: detected, attrs: "team=env,region=eu%2Dwest", service: "env-service", wantTeam: "traces"},
		{name: "schemaless, service from the environment", res: schemaless, attrs: "extra=1", service: "env-service", wantTeam: "schemaless"},
		{name: "empty", res: resource.Empty(), attrs: "team=env", wantTeam: "env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", tc.attrs)
			t.Setenv("OTEL_SERVICE_NAME", tc.service)
			pair := newDiffPairWith(t, diffSetup{
				sdk:  []sdklog.LoggerProviderOption{sdklog.WithResource(tc.res)},
				ours: []otlplog.Option{otlplog.WithResource(tc.res)},
			})
			for _, s := range pair.sides() {
				diffFixedRecords(s.provider)
			}
			n, report, ours := pair.compare(t, pair.start, func(s *commonpb.InstrumentationScope) bool {
				return s.GetName() != "resource.test"
			})
			if report != "" {
				t.Fatal(report)
			}
			if n != 4 {
				t.Fatalf("%d records compared, want 4", n)
			}
			got := map[string]string{}
			for _, kv := range ours[0].GetResource().GetAttributes() {
				got[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			if got["team"] != tc.wantTeam {
				t.Errorf("team = %q, want %q", got["team"], tc.wantTeam)
			}
			if tc.service != "" && tc.res != detected && got["service.name"] != tc.service {
				t.Errorf("service.name = %q, want %q", got["service.name"], tc.service)
			}
			if _, ok := got["process.executable.name"]; ok {
				t.Error("zaplens's own detection is in the resource")
			}
			if ours[0].GetSchemaUrl() != tc.res.SchemaURL() {
				t.Errorf("schema URL %q, want %q", ours[0].GetSchemaUrl(), tc.res.SchemaURL())
			}
		})
	}
}
