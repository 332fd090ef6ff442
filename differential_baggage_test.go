package zaplens

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/processors/baggagecopy"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/log"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"go.uber.org/zap"
)

// WithBaggage against contrib's baggagecopy, the SDK's way to the same
// end: the bridge without it on sdk/log with baggagecopy's processor
// before the batch processor, against the bridge with it on a zaplens
// provider, and on sdk/log alone; each to its own real receiver. What
// the receivers decode must be equal. baggagecopy adds members in the
// baggage's map order, which changes from run to run: attributes are
// compared sorted by key (every record's keys are unique).
func TestBaggageMatchesBaggagecopy(t *testing.T) {
	cleanEnv(t)
	spans := newDiffSpans(t)
	named := []string{"tenant", "user", "step", "missing"}
	for _, tc := range []struct {
		name   string
		opt    Option
		filter baggagecopy.Filter
	}{
		{"all members", WithBaggage(), nil},
		{"named members", WithBaggage(named...), func(m baggage.Member) bool { return slices.Contains(named, m.Key()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := newDiffPairWith(t, defaultDiffSetup(t, baggagecopy.NewLogProcessor(tc.filter)))
			plain := startOTLPServer(t, "127.0.0.1:0", keepRecords())
			plainP := newDiffSDKProvider(t, plain.Addr, defaultDiffSetup(t))
			sides := []struct {
				p   log.LoggerProvider
				opt []Option
			}{{pair.sdkP, nil}, {pair.ourP, []Option{tc.opt}}, {plainP, []Option{tc.opt}}}
			for _, s := range sides {
				b := newDiffBridges(s.p, newDiffClock(), s.opt...)
				diffBaggageScript(t, b.core, spans)
				diffBaggageScript(t, b.tee, spans)
				diffScript(b.core, spans) // no baggage: nothing added
			}
			pair.flush(t)
			if err := plainP.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			end := time.Now()
			sdk, ours := pair.take()
			if got := countAttr(ours, "tenant"); got != 12 {
				t.Fatalf("%d records on our side carry the tenant member, want 12", got)
			}
			bridged := func(*commonpb.InstrumentationScope) bool { return true }
			for _, other := range []struct {
				name string
				rls  []*logpb.ResourceLogs
			}{{"zaplens provider", ours}, {"sdk/log alone", diffTake(plain)}} {
				n, report := diffCompare(sortedAttrs(sdk), sortedAttrs(other.rls), pair.start, end, bridged)
				if report != "" {
					t.Fatalf("baggagecopy against WithBaggage on %s:\n%s", other.name, report)
				}
				t.Logf("%s: %d records compared, equal", other.name, n)
			}
		})
	}
}

// diffBaggageScript logs entries whose contexts carry baggage: per entry,
// from With, the entry's winning, a member named like a field, values
// that baggage percent-encodes, none, and baggage beside a span.
func diffBaggageScript(t *testing.T, l *zap.Logger, spans diffSpans) {
	bg := withTestBaggage(t, spans.sampled, "tenant", "acme", "user", "ü ser;=,%", "extra", "x", "step", "from baggage")
	other := withTestBaggage(t, context.Background(), "tenant", "other", "only", "here")
	l.Info("baggage", Context(bg), zap.Int("n", 1))
	l.Info("a member named like a field", zap.Int("step", 3), Context(bg))
	w := l.With(Context(bg), zap.String("w", "x"))
	w.Info("baggage from With")
	w.Warn("the entry's context wins", Context(other), EventName("ev"))
	w.Error("with an error", zap.Error(errors.New("boom")))
	l.Info("no baggage", Context(spans.unsampled))
	l.Info("empty baggage", Context(withTestBaggage(t, context.Background())))
	l.Named("named").Info("named logger", Context(bg), zap.String(strings.Repeat("k", 3), "v"))
}

// sortedAttrs returns rls with every record's attributes sorted by key.
func sortedAttrs(rls []*logpb.ResourceLogs) []*logpb.ResourceLogs {
	for _, rl := range rls {
		for _, sl := range rl.GetScopeLogs() {
			for _, r := range sl.GetLogRecords() {
				slices.SortStableFunc(r.Attributes, func(a, b *commonpb.KeyValue) int { return cmp.Compare(a.GetKey(), b.GetKey()) })
			}
		}
	}
	return rls
}

// countAttr counts the records that have an attribute under key.
func countAttr(rls []*logpb.ResourceLogs, key string) int {
	n := 0
	for _, rl := range rls {
		for _, sl := range rl.GetScopeLogs() {
			for _, r := range sl.GetLogRecords() {
				if slices.ContainsFunc(r.GetAttributes(), func(kv *commonpb.KeyValue) bool { return kv.GetKey() == key }) {
					n++
				}
			}
		}
	}
	return n
}
