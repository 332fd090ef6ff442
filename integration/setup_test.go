package integration

// Helpers shared by the end-to-end scenarios (e2e_test.go, load_test.go).
// Their names start with e2e so they do not collide with other files of
// this package.

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/log"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

func TestMain(m *testing.M) {
	// The Fatal scenario re-executes this binary as a child; see e2e_test.go.
	if addr := os.Getenv(e2eFatalChildEnv); addr != "" {
		e2eFatalChild(addr)
		return // not reached: Fatal exits
	}
	// Read before the ZAPLENS_* variables are cleared below: it says how the
	// VictoriaLogs tests may treat a failed build (victorialogs_test.go).
	vlSkip = os.Getenv(vlSkipEnv) == "1"
	vlCI = os.Getenv("CI") == "true"
	// The machine's OTEL_* variables must not change any test; tests that
	// are about a variable set it themselves.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OTEL_") || strings.HasPrefix(k, "ZAPLENS_") {
			_ = os.Unsetenv(k)
		}
	}
	os.Exit(m.Run())
}

// e2eProvider is zaplens's own pipeline, pointed at r over OTLP/gRPC, shut
// down at the end of the test. Loss reports go to the returned buffer and
// are logged.
func e2eProvider(t testing.TB, r *Receiver, opts ...otlplog.Option) (*otlplog.LoggerProvider, *testsupport.LockedBuffer) {
	t.Helper()
	return e2eProviderOver(t, r, GRPC, opts...)
}

// e2eProviderOver is e2eProvider over the given transport.
func e2eProviderOver(t testing.TB, r *Receiver, proto Proto, opts ...otlplog.Option) (*otlplog.LoggerProvider, *testsupport.LockedBuffer) {
	t.Helper()
	losses := &testsupport.LockedBuffer{}
	all := []otlplog.Option{
		otlplog.WithEndpoint(r.URLFor(proto)),
		otlplog.WithProtocol(string(proto)),
		otlplog.WithServiceName("zaplens-e2e"),
		otlplog.WithLossWriter(losses),
	}
	if tc := r.ClientTLS(); tc != nil {
		all = append(all, otlplog.WithTLSConfig(tc))
	}
	return e2eProviderWith(t, losses, append(all, opts...)...)
}

// e2eProviderWith is a provider with opts, shut down at the end of the
// test; its loss reports, which go to losses, are logged then.
func e2eProviderWith(t testing.TB, losses *testsupport.LockedBuffer, opts ...otlplog.Option) (*otlplog.LoggerProvider, *testsupport.LockedBuffer) {
	t.Helper()
	p, err := otlplog.NewLoggerProvider(context.Background(), opts...)
	if err != nil {
		t.Fatalf("NewLoggerProvider: %v", err)
	}
	t.Cleanup(func() {
		_, _ = e2eShutdown(t, p, 5*time.Second)
		if s := losses.String(); s != "" {
			t.Logf("loss reports:\n%s", s)
		}
	})
	return p, losses
}

// e2eLogger is the user's logger: a JSON core at Debug writing to w, teed
// by zaplens into p.
func e2eLogger(p log.LoggerProvider, w io.Writer, opts ...zaplens.Option) *zap.Logger {
	base := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(w), zapcore.DebugLevel)
	return zap.New(zaplens.NewTee(base, append([]zaplens.Option{zaplens.WithLoggerProvider(p)}, opts...)...), zap.AddCaller())
}

// e2eFlush flushes p within 10s and fails the test if it cannot.
func e2eFlush(t testing.TB, p *otlplog.LoggerProvider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.ForceFlush(ctx); err != nil {
		t.Fatalf("ForceFlush: %v", err)
	}
}

// e2eShutdown shuts p down within d and returns how long it took.
func e2eShutdown(t testing.TB, p *otlplog.LoggerProvider, d time.Duration) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	err := p.Shutdown(ctx)
	return time.Since(start), err
}

// e2eLatencies summarises the durations of single logging calls.
type e2eLatencies struct {
	n                   int
	total               time.Duration
	p50, p99, p999, max time.Duration
}

func e2eSummarise(d []time.Duration) e2eLatencies {
	if len(d) == 0 {
		return e2eLatencies{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var total time.Duration
	for _, x := range s {
		total += x
	}
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return e2eLatencies{n: len(s), total: total, p50: at(0.50), p99: at(0.99), p999: at(0.999), max: s[len(s)-1]}
}

func (l e2eLatencies) mean() time.Duration {
	if l.n == 0 {
		return 0
	}
	return l.total / time.Duration(l.n)
}

func (l e2eLatencies) String() string {
	return fmt.Sprintf("%d calls: mean %v, p50 %v, p99 %v, p99.9 %v, max %v",
		l.n, l.mean(), l.p50, l.p99, l.p999, l.max)
}

// e2eRank logs steps×perStep lines the way a busy training rank does: each
// step's lines at full speed from alternating loggers, then compute for
// pause. Every line carries seq (0..N-1, in logging order) and 3 more
// fields. It returns the latency of every call and each step's loop time.
func e2eRank(loggers []*zap.Logger, steps, perStep int, pause time.Duration) (calls []time.Duration, stepTimes []time.Duration) {
	return e2eRankFrom(0, loggers, steps, perStep, pause)
}

// e2eRankFrom is e2eRank with seq starting at seq0, for a run made of
// several calls.
func e2eRankFrom(seq0 int, loggers []*zap.Logger, steps, perStep int, pause time.Duration) (calls []time.Duration, stepTimes []time.Duration) {
	calls = make([]time.Duration, 0, steps*perStep)
	seq := seq0
	for step := 0; step < steps; step++ {
		stepStart := time.Now()
		for i := 0; i < perStep; i++ {
			l := loggers[seq%len(loggers)]
			t0 := time.Now()
			l.Info("train step progress",
				zap.Int("seq", seq),
				zap.Int("step", step),
				zap.Float64("loss", 1/float64(seq+1)),
				zap.String("phase", "forward"))
			calls = append(calls, time.Since(t0))
			seq++
		}
		stepTimes = append(stepTimes, time.Since(stepStart))
		if pause > 0 {
			time.Sleep(pause)
		}
	}
	return calls, stepTimes
}

// e2eDistinct counts the distinct seq attributes of recs and checks that,
// taking each line's first copy, seq increases within each scope, and that
// no line came twice: from a healthy collector a copy is a defect (it was
// FINDINGS.md #4: a flush or shutdown cancelled an export in flight and
// sent it again). It returns the counts, for the messages of callers that
// compare them with the provider's.
func e2eDistinct(t testing.TB, recs []Record) (distinct, dups int) {
	t.Helper()
	last := map[string]int64{}
	seen := make(map[int64]bool, len(recs))
	bad := 0
	for _, r := range recs {
		seq, ok := r.Attrs["seq"].(int64)
		if !ok {
			continue
		}
		if seen[seq] {
			dups++
			continue
		}
		seen[seq] = true
		if prev, ok := last[r.Scope]; ok && seq <= prev {
			if bad < 5 {
				t.Errorf("scope %s: seq %d arrived after %d", r.Scope, seq, prev)
			}
			bad++
		}
		last[r.Scope] = seq
	}
	if bad > 0 {
		t.Errorf("%d records out of order", bad)
	}
	if dups > 0 {
		t.Errorf("the collector stored %d extra copies of lines it had already stored (%d distinct)", dups, len(seen))
	}
	return len(seen), dups
}
