package zaplens

import (
	"context"
	"testing"
	"time"

	"github.com/zaplens/zaplens/otlplog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/zaplens/zaplens/internal/zapfield/fieldtest"
)

// gotRecord is what a test reads back of a record, whichever path it took.
type gotRecord struct {
	scope, body, event string
	attrs              map[string]string // values as text
}

// bridgePath is one of the bridge's two paths: a provider of the user's
// own (sdk/log, a record per entry) or a zaplens provider (OTLP bytes to a
// real receiver).
type bridgePath struct {
	name     string
	provider log.LoggerProvider
	read     func(t testing.TB) []gotRecord
}

// bothPaths returns the two paths, each with its own sink.
func bothPaths(t *testing.T) []bridgePath {
	t.Helper()
	cleanEnv(t)
	c := newCapture(t)
	srv := startOTLPServer(t, "127.0.0.1:0", keepRecords())
	p := newTestProvider(t, otlplog.WithEndpoint("http://"+srv.Addr), otlplog.WithScheduleDelay(time.Hour))
	return []bridgePath{
		{"sdk", c.lp, func(testing.TB) []gotRecord {
			var out []gotRecord
			for _, r := range c.records() {
				g := gotRecord{scope: r.InstrumentationScope().Name, body: r.Body().AsString(), event: r.EventName(), attrs: map[string]string{}}
				r.WalkAttributes(func(kv attribute.KeyValue) bool {
					g.attrs[string(kv.Key)] = kv.Value.String()
					return true
				})
				out = append(out, g)
			}
			return out
		}},
		{"zaplens", p, func(t testing.TB) []gotRecord {
			if err := p.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var out []gotRecord
			for _, rl := range srv.Resources() {
				for _, sl := range rl.GetScopeLogs() {
					for _, r := range sl.GetLogRecords() {
						g := gotRecord{scope: sl.GetScope().GetName(), body: r.GetBody().GetStringValue(), event: r.GetEventName(), attrs: map[string]string{}}
						for _, kv := range r.GetAttributes() {
							g.attrs[kv.GetKey()] = anyText(kv.GetValue())
						}
						out = append(out, g)
					}
				}
			}
			return out
		}},
	}
}

// anyText is an OTLP value as attribute.Value.String writes the same one.
func anyText(v *commonpb.AnyValue) string { return fieldtest.AnyAttr(v).String() }

// gotBodies lists the records' bodies.
func gotBodies(rs []gotRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.body
	}
	return out
}
