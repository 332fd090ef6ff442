package integration

// The Collector's default limits: 4 MiB per gRPC message (20 MiB per HTTP
// body). zaplens cuts requests under DefaultRequestBytes (3 MiB), and cuts
// a record too large for any request, so that neither a burst of large
// lines nor one huge field loses anything.

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/otlplog"
)

// stackBytes is the size of the stack zap.AddStacktrace attaches to a line
// logged depth frames below atDepth's caller.
func stackBytes(depth int) int {
	n := 0
	atDepth(depth, func() { n = len(zap.Stack("s").String) })
	return n
}

// atDepth calls f depth frames further down.
//
//go:noinline
func atDepth(depth int, f func()) {
	if depth <= 0 {
		f()
		return
	}
	atDepth(depth-1, f)
}

// depthFor finds the depth at which a stack is about want bytes.
func depthFor(want int) int {
	base, more := stackBytes(0), stackBytes(10)
	per := max((more-base)/10, 1)
	return max((want-base)/per, 0)
}

// TestDefaultLimitStackBurst: 1024 error lines, each with a 4.6 KB stack
// (zap.AddStacktrace), 4.9 MB together, more than a default Collector takes
// in one gRPC message. They arrive in full, in requests under the byte
// bound, whether sent as they come or from a queue that filled while the
// collector was down.
func TestDefaultLimitStackBurst(t *testing.T) {
	const n = 1024
	// zap.Stack here counts a few frames the logger's own stack skips.
	depth := depthFor(4850)
	for _, proto := range protos {
		for _, down := range []bool{false, true} {
			name := proto.Short() + "/healthy"
			if down {
				name = proto.Short() + "/queued while down"
			}
			t.Run(name, func(t *testing.T) {
				var opts []ReceiverOption
				if down {
					opts = append(opts, Stopped())
				}
				r := StartReceiver(t, opts...)
				p, losses := e2eProviderOver(t, r, proto)
				base := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(e2eDiscard{}), zapcore.DebugLevel)
				l := zap.New(zaplens.NewTee(base, zaplens.WithLoggerProvider(p)), zap.AddStacktrace(zapcore.ErrorLevel)).Named("trainer")
				err := errors.New("CUDA out of memory")
				atDepth(depth, func() {
					for i := range n {
						l.Error("step failed", zap.Error(err), zap.Int("seq", i))
					}
				})
				if down {
					time.Sleep(500 * time.Millisecond)
					r.Start(t)
				}
				if !r.WaitForCount(t, n, 20*time.Second) {
					t.Fatalf("received %d of %d; stats %s; losses %q", r.Count(), n, p.Stats(), losses.String())
				}
				checkOnce(t, r, p, n)
				total, short := 0, 0
				for _, rec := range r.Records() {
					s, _ := rec.Attrs["exception.stacktrace"].(string)
					total += len(s)
					if len(s) < 4500 {
						short++
					}
				}
				if short > 0 {
					t.Errorf("%d records with a stack under 4.5 KB", short)
				}
				if total <= 4<<20 {
					t.Errorf("the stacks take %d bytes, not over the 4 MiB a gRPC message may hold: the scenario tests nothing", total)
				}
				for i, c := range r.Calls() {
					if c.Bytes > otlplog.DefaultRequestBytes {
						t.Errorf("request %d: %d bytes, over the %d bound", i, c.Bytes, otlplog.DefaultRequestBytes)
					}
				}
				t.Logf("%d lines, %d bytes of stacks (%d per line), in %d requests", n, total, total/n, r.Exports())
				if p.Stats().Cut != 0 {
					t.Errorf("%d records cut; none is too large for a request", p.Stats().Cut)
				}
			})
		}
	}
}

// TestDefaultLimitHugeField: one line with a 5 MB field among 99 small
// ones. All 100 arrive; the big one is cut to fit a request, marked
// zaplens.cut=true and counted in Stats().Cut; the others are untouched.
func TestDefaultLimitHugeField(t *testing.T) {
	const n, big = 100, 50
	blob := strings.Repeat("0123456789", 500_000) // 5 MB
	for _, proto := range protos {
		t.Run(proto.Short(), func(t *testing.T) {
			r := StartReceiver(t)
			p, losses := e2eProviderOver(t, r, proto)
			l := e2eLogger(p, e2eDiscard{}).Named("dump")
			for i := range n {
				if i == big {
					l.Info("tensor dump", zap.Int("seq", i), zap.String("blob", blob))
					continue
				}
				l.Info("small line", zap.Int("seq", i), zap.String("blob", "tiny"))
			}
			if !r.WaitForCount(t, n, 15*time.Second) {
				t.Fatalf("received %d of %d; stats %s; losses %q", r.Count(), n, p.Stats(), losses.String())
			}
			checkOnce(t, r, p, n)
			if st := p.Stats(); st.Cut != 1 {
				t.Errorf("Stats().Cut = %d, want 1", st.Cut)
			}
			for _, rec := range r.Records() {
				seq, _ := rec.Attrs["seq"].(int64)
				got, _ := rec.Attrs["blob"].(string)
				cut, marked := rec.Attrs["zaplens.cut"]
				if seq != big {
					if marked || got != "tiny" {
						t.Errorf("line %d: blob %q, zaplens.cut %v", seq, got, cut)
					}
					continue
				}
				t.Logf("the big line arrived with %d of %d bytes of its field", len(got), len(blob))
				if cut != true {
					t.Errorf("the big line has zaplens.cut = %v, want true", cut)
				}
				if !strings.HasPrefix(blob, got) || len(got) < 2<<20 || len(got) >= len(blob) {
					t.Errorf("the big field arrived with %d bytes: want a prefix of it, cut to fit 3 MiB", len(got))
				}
				if rec.BodyString != "tensor dump" {
					t.Errorf("the big line's body is %q", rec.BodyString)
				}
			}
			for i, c := range r.Calls() {
				if c.Bytes > otlplog.DefaultRequestBytes {
					t.Errorf("request %d: %d bytes, over the %d bound", i, c.Bytes, otlplog.DefaultRequestBytes)
				}
			}
		})
	}
}
