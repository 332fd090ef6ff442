package zaplens

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/proto"

	logpb "go.opentelemetry.io/proto/otlp/logs/v1"

	"github.com/zaplens/zaplens/otlplog"
)

// holdWay is one of the two ways a held entry takes: zaplens's provider
// (OTLP bytes) or the SDK's (a log.Record).
type holdWay struct {
	name string
	// logger builds a logger on a fresh provider with opts; lines returns
	// the bodies delivered so far, in order, with their trace ids and the
	// eviction count each carries.
	logger func(t *testing.T, opts ...Option) (*zap.Logger, *Core, func() []holdLine)
}

type holdLine struct {
	body    string
	traceID trace.TraceID
	evicted int64
	time    time.Time
}

var holdWays = []holdWay{
	{"zaplens", func(t *testing.T, opts ...Option) (*zap.Logger, *Core, func() []holdLine) {
		mem := &memExporter{}
		p := newTestProvider(t, withExporter(mem))
		t.Cleanup(func() { _ = shutdownWithin(p, 5*time.Second) })
		c := NewCore(append([]Option{WithLoggerProvider(p)}, opts...)...)
		return zap.New(c), c, func() []holdLine {
			if err := p.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			mem.Mu.Lock()
			defer mem.Mu.Unlock()
			var out []holdLine
			for _, r := range mem.Records {
				l := holdLine{body: r.GetBody().GetStringValue(), time: time.Unix(0, int64(r.GetTimeUnixNano()))}
				copy(l.traceID[:], r.GetTraceId())
				for _, kv := range r.GetAttributes() {
					if kv.GetKey() == KeyHoldEvicted {
						l.evicted = kv.GetValue().GetIntValue()
					}
				}
				out = append(out, l)
			}
			return out
		}
	}},
	{"sdk", func(t *testing.T, opts ...Option) (*zap.Logger, *Core, func() []holdLine) {
		capt := newCapture(t)
		c := NewCore(append([]Option{WithLoggerProvider(capt.lp)}, opts...)...)
		return zap.New(c), c, func() []holdLine {
			var out []holdLine
			for _, r := range capt.records() {
				l := holdLine{body: r.Body().AsString(), traceID: r.TraceID(), time: r.Timestamp()}
				if v, ok := attrs(r)[KeyHoldEvicted]; ok {
					l.evicted = v.AsInt64()
				}
				out = append(out, l)
			}
			return out
		}
	}},
}

// A failing trace ships the Debug lines it held, first, in the order
// logged, each with its own time and trace; a trace that does not fail
// ships none; after the failure, the trace's Debug lines go straight
// through; a line of no trace is never held.
func TestHoldShipsTheFailingTrace(t *testing.T) {
	for _, way := range holdWays {
		t.Run(way.name, func(t *testing.T) {
			cleanEnv(t)
			l, c, lines := way.logger(t, WithHold(zapcore.DebugLevel))
			bad, badSC := spanContext(t)
			good, goodSC := spanContext(t)
			var times []time.Time
			for i := range 5 {
				l.Debug("bad "+strconv.Itoa(i), Context(bad))
				l.Debug("good "+strconv.Itoa(i), Context(good))
				times = append(times, time.Now())
			}
			l.Debug("no trace")
			l.Info("info", Context(good))
			if got := lines(); len(got) != 1 || got[0].body != "info" {
				t.Fatalf("before the failure, delivered %v: want only the Info line", got)
			}
			l.Error("failed", Context(bad))
			l.Debug("after", Context(bad))
			got := lines()[1:]
			want := []string{"bad 0", "bad 1", "bad 2", "bad 3", "bad 4", "failed", "after"}
			if len(got) != len(want) {
				t.Fatalf("delivered %v, want %v", got, want)
			}
			for i, w := range want {
				if got[i].body != w || got[i].traceID != badSC.TraceID() {
					t.Errorf("line %d: %q of trace %s, want %q of %s", i, got[i].body, got[i].traceID, w, badSC.TraceID())
				}
				if i < 5 && got[i].time.After(times[i]) {
					t.Errorf("line %d carries %v, after it was logged (%v): its time is the ship's", i, got[i].time, times[i])
				}
			}
			s := c.HoldStats()
			if s.Held != 10 || s.Shipped != 5 || s.Entries != 5 || s.Evicted != 0 {
				t.Errorf("stats %+v: want 10 held, 5 shipped, the good trace's 5 still held", s)
			}
			ReleaseHeld(goodSC.TraceID())
			if s := c.HoldStats(); s.Entries != 0 || s.Released != 5 {
				t.Errorf("after the good trace ended, stats %+v: want its 5 released", s)
			}
			if n := len(lines()); n != 8 {
				t.Errorf("%d lines delivered, want 8: the good trace's Debug lines went out", n)
			}
		})
	}
}

// A held entry, shipped, is what the bridge would have sent had its level
// taken it: byte for byte, on zaplens's provider.
func TestHeldEntryIsWhatBridgingSends(t *testing.T) {
	cleanEnv(t)
	ctx, _ := spanContext(t)
	clock := fixedClock{time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	script := func(l *zap.Logger) {
		l = l.WithOptions(zap.WithClock(clock))
		l.Debug("plain", Context(ctx))
		l.Named("svc.db").Debug("fields", Context(ctx), zap.String("q", "select 1"), zap.Int("rows", 3),
			zap.Any("m", map[string]any{"a": 1}), zap.Error(fmt.Errorf("boom")))
		l.With(zap.String("w", "with")).Debug("with", Context(ctx), zap.Namespace("ns"), zap.Bool("b", true))
		l.Debug("nested", Context(ctx), zap.Object("o", diffObject{name: "x", n: 1}))
	}
	run := func(opts ...Option) []*logpb.LogRecord {
		mem := &memExporter{}
		p := newTestProvider(t, withExporter(mem))
		l := zap.New(NewCore(append([]Option{WithLoggerProvider(p)}, opts...)...))
		script(l)
		l.WithOptions(zap.WithClock(clock)).Error("trigger", Context(ctx))
		if err := shutdownWithin(p, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		return mem.Records
	}
	bridged := run(WithLevel(zapcore.DebugLevel))
	held := run(WithHold(zapcore.DebugLevel))
	if len(bridged) != 5 || len(held) != 5 {
		t.Fatalf("bridged %d records, held and shipped %d: want 5 each", len(bridged), len(held))
	}
	for i := range bridged {
		if !proto.Equal(bridged[i], held[i]) {
			t.Errorf("record %d differs:\nbridged %v\nheld    %v", i, bridged[i], held[i])
		}
	}
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                         { return c.t }
func (c fixedClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// A trace's bound pushes out its oldest entries, counted, and the first
// entry shipped says how many; the bridge's bound is never passed, and
// every entry held is shipped, evicted, released or still held.
func TestHoldBounds(t *testing.T) {
	for _, way := range holdWays {
		t.Run(way.name, func(t *testing.T) {
			cleanEnv(t)
			const total, perTrace = 64 << 10, 8 << 10
			l, c, lines := way.logger(t, WithHold(zapcore.DebugLevel), WithHoldBytes(total, perTrace))
			one, _ := spanContext(t)
			pad := zap.String("pad", string(make([]byte, 200)))
			for i := range 100 {
				l.Debug("line "+strconv.Itoa(i), Context(one), pad)
			}
			l.Error("failed", Context(one))
			got := lines()
			if len(got) < 2 || got[0].evicted == 0 {
				t.Fatalf("delivered %d lines, the first carrying %d evicted: want a count of the lines the trace's bound pushed out", len(got), got[0].evicted)
			}
			kept := len(got) - 1
			if int(got[0].evicted)+kept != 100 {
				t.Errorf("%d evicted + %d shipped: want the trace's 100", got[0].evicted, kept)
			}
			if got[0].body != "line "+strconv.Itoa(100-kept) || got[kept-1].body != "line 99" {
				t.Errorf("shipped %q to %q: want the newest %d, in order", got[0].body, got[kept-1].body, kept)
			}
			// Many traces: the bridge's bound holds, and the counts add up.
			for i := range 2000 {
				ctx, _ := spanContext(t)
				l.Debug("many "+strconv.Itoa(i), Context(ctx), pad)
				if s := c.HoldStats(); s.Bytes > total {
					t.Fatalf("after %d traces, %d bytes held: over the bound of %d", i, s.Bytes, total)
				}
			}
			s := c.HoldStats()
			if s.Evicted == 0 {
				t.Error("2000 traces of 200 bytes held in 64 KiB, and none evicted")
			}
			if s.Held != s.Shipped+s.Evicted+s.Released+uint64(s.Entries) {
				t.Errorf("stats %+v: held ≠ shipped + evicted + released + held now", s)
			}
		})
	}
}

// Without a span processor, a trace idle for the idle time is freed.
func TestHoldIdleTraceIsFreed(t *testing.T) {
	cleanEnv(t)
	l, c, _ := holdWays[0].logger(t, WithHold(zapcore.DebugLevel), WithHoldIdle(50*time.Millisecond))
	ctx, _ := spanContext(t)
	l.Debug("held", Context(ctx))
	if s := c.HoldStats(); s.Entries != 1 {
		t.Fatalf("stats %+v: want the line held", s)
	}
	if !eventually(5*time.Second, func() bool { return c.HoldStats().Traces == 0 }) {
		t.Fatalf("stats %+v: the idle trace was not freed", c.HoldStats())
	}
	if s := c.HoldStats(); s.Released != 1 || s.Entries != 0 {
		t.Errorf("stats %+v: want the line released, nothing held", s)
	}
}

// Many goroutines log into many traces at once, and some traces fail
// while their goroutines still log: every line of a failing trace
// arrives once, none of the others.
func TestHoldConcurrentTraces(t *testing.T) {
	for _, way := range holdWays {
		t.Run(way.name, func(t *testing.T) {
			cleanEnv(t)
			l, c, lines := way.logger(t, WithHold(zapcore.DebugLevel))
			const traces, goroutines, perG = 20, 4, 50
			var wg sync.WaitGroup
			failing := map[trace.TraceID]bool{}
			for tr := range traces {
				ctx, sc := spanContext(t)
				failing[sc.TraceID()] = tr%2 == 0
				for g := range goroutines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range perG {
							l.Debug(fmt.Sprintf("t%d g%d %d", tr, g, i), Context(ctx))
							if tr%2 == 0 && g == 0 && i == perG/2 {
								l.Error(fmt.Sprintf("t%d failed", tr), Context(ctx))
							}
						}
					}()
				}
			}
			wg.Wait()
			seen := map[string]int{}
			for _, ln := range lines() {
				if !failing[ln.traceID] {
					t.Fatalf("%q of a trace that did not fail was delivered", ln.body)
				}
				seen[ln.body]++
			}
			for body, n := range seen {
				if n != 1 {
					t.Errorf("%q delivered %d times", body, n)
				}
			}
			if want := traces / 2 * (goroutines*perG + 1); len(seen) != want {
				t.Errorf("%d lines of failing traces delivered, want %d", len(seen), want)
			}
			if s := c.HoldStats(); s.Evicted != 0 || s.Entries != traces/2*goroutines*perG {
				t.Errorf("stats %+v: want the good traces' lines held, none evicted", s)
			}
		})
	}
}

// An entry below the hold level, and one at it outside any trace, is not
// held; the bridge's level still takes what it takes.
func TestHoldLeavesTheRestAlone(t *testing.T) {
	cleanEnv(t)
	l, c, lines := holdWays[1].logger(t, WithHold(zapcore.DebugLevel))
	ctx, _ := spanContext(t)
	l.Log(zapcore.Level(-2), "below the hold level", Context(ctx))
	l.Debug("no trace")
	if s := c.HoldStats(); s.Held != 0 {
		t.Errorf("stats %+v: nothing should be held", s)
	}
	l.Warn("warn", Context(ctx))
	if got := lines(); len(got) != 1 || got[0].body != "warn" {
		t.Errorf("delivered %v: want the Warn line alone (a Warn triggers nothing)", got)
	}
}

// ZAPLENS_HOLD turns holding on, at its level.
func TestHoldFromEnv(t *testing.T) {
	cleanEnv(t)
	t.Setenv(EnvHold, "debug")
	l, c, _ := holdWays[1].logger(t)
	ctx, _ := spanContext(t)
	l.Debug("held", Context(ctx))
	if s := c.HoldStats(); s.Held != 1 {
		t.Errorf("with %s=debug, stats %+v: want the line held", EnvHold, s)
	}
}

// BenchmarkHold compares an entry held in its trace with the same entry
// bridged at Info, on zaplens's provider, and a Debug entry the bridge
// leaves out without the hold and, with it, outside any trace. The trace
// is released now and then, as a request's end would.
func BenchmarkHold(b *testing.B) {
	ctx, sc := spanContext(b)
	for _, bc := range []struct {
		name    string
		opts    []Option
		level   zapcore.Level
		noTrace bool
	}{
		{"bridged-info", nil, zapcore.InfoLevel, false},
		{"held-debug", []Option{WithHold(zapcore.DebugLevel)}, zapcore.DebugLevel, false},
		{"filtered-debug", nil, zapcore.DebugLevel, false},
		{"hold-on-debug-no-trace", []Option{WithHold(zapcore.DebugLevel)}, zapcore.DebugLevel, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(nil), withDiscardExport())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = shutdownWithin(p, 5*time.Second) })
			l := zap.New(NewCore(append([]Option{WithLoggerProvider(p)}, bc.opts...)...))
			fields := []zap.Field{Context(ctx), zap.String("user", "alice"), zap.Int("attempt", 3)}
			if bc.noTrace {
				fields = fields[1:]
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if ce := l.Check(bc.level, "request handled"); ce != nil {
					ce.Write(fields...)
				}
				if i%100 == 99 {
					ReleaseHeld(sc.TraceID())
				}
			}
		})
	}
}

// 10,000 traces at once, each holding lines past what the bridge may
// hold: the heap, sampled, stays within the bound and the bookkeeping's
// slack, and every entry is counted.
func TestHoldMemoryBound(t *testing.T) {
	cleanEnv(t)
	l, c, _ := holdWays[0].logger(t, WithHold(zapcore.DebugLevel))
	ctxs := make([]context.Context, 10000)
	for i := range ctxs {
		ctxs[i], _ = spanContext(t)
	}
	pad := zap.String("pad", string(make([]byte, 200)))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	for round := range 20 {
		for i, ctx := range ctxs {
			l.Debug("line", Context(ctx), zap.Int("round", round), zap.Int("trace", i), pad)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
		if s := c.HoldStats(); s.Bytes > DefaultHoldBytes {
			t.Fatalf("round %d: %d bytes held, over the bound", round, s.Bytes)
		}
	}
	s := c.HoldStats()
	t.Logf("200,000 lines in 10,000 traces: %d held now in %d traces, %d evicted; heap above the start at most %.1f MiB (bound %d MiB)",
		s.Entries, s.Traces, s.Evicted, float64(peak)/(1<<20), DefaultHoldBytes>>20)
	if s.Held != s.Evicted+uint64(s.Entries) || s.Evicted == 0 {
		t.Errorf("stats %+v: every line held is evicted or still held", s)
	}
	if peak > 2*DefaultHoldBytes {
		t.Errorf("the heap grew by %d bytes holding at most %d: the bound does not bound memory", peak, DefaultHoldBytes)
	}
}
