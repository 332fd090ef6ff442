package zaplens

import (
	"io"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestLookupRank(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Rank
		ok   bool
	}{
		{"none", nil, Rank{}, false},
		{"torchrun", map[string]string{"RANK": "5", "LOCAL_RANK": "1", "WORLD_SIZE": "16"}, Rank{5, 1, 16, "torchrun"}, true},
		{"slurm", map[string]string{"SLURM_PROCID": "7", "SLURM_LOCALID": "3", "SLURM_NTASKS": "8"}, Rank{7, 3, 8, "slurm"}, true},
		{"openmpi", map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_SIZE": "4"}, Rank{2, 0, 4, "openmpi"}, true},
		// torchrun inside a Slurm allocation: torchrun's rank is the process's.
		{"torchrun in slurm", map[string]string{"RANK": "9", "WORLD_SIZE": "16", "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, Rank{9, -1, 16, "torchrun"}, true},
		{"mpirun in slurm", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "SLURM_PROCID": "0"}, Rank{3, -1, -1, "openmpi"}, true},
		// A bad RANK is not a rank: the next launcher is tried.
		{"bad rank", map[string]string{"RANK": "x", "SLURM_PROCID": "4"}, Rank{4, -1, -1, "slurm"}, true},
		{"negative", map[string]string{"RANK": "-1"}, Rank{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setEnv(t, tc.env)
			got, ok := LookupRank()
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRankLevel(t *testing.T) {
	for _, tc := range []struct {
		rank string
		want zapcore.Level
	}{
		{"", zapcore.InfoLevel}, // no launcher: the only process, rank 0
		{"0", zapcore.InfoLevel},
		{"1", zapcore.InfoLevel},
		{"2", zapcore.WarnLevel},
		{"63", zapcore.WarnLevel},
	} {
		cleanEnv(t)
		t.Setenv("RANK", tc.rank)
		if got := RankLevel([]int{0, 1}, zapcore.InfoLevel, zapcore.WarnLevel); got != tc.want {
			t.Errorf("rank %q: level %v, want %v", tc.rank, got, tc.want)
		}
	}
}

func TestWithRankLevelSetsBridgeLevel(t *testing.T) {
	cleanEnv(t)
	t.Setenv("SLURM_PROCID", "3")
	c := newConfig([]Option{WithRankLevel([]int{0}, zapcore.InfoLevel, zapcore.WarnLevel)})
	if c.level.Enabled(zapcore.InfoLevel) || !c.level.Enabled(zapcore.WarnLevel) {
		t.Errorf("rank 3: level %v, want Warn", c.level)
	}
	c = newConfig([]Option{WithRankLevel([]int{0}, zapcore.InfoLevel, Off)})
	for l := zapcore.DebugLevel; l <= zapcore.FatalLevel; l++ {
		if c.level.Enabled(l) {
			t.Errorf("Off enables %v", l)
		}
	}
	t.Setenv("SLURM_PROCID", "0")
	c = newConfig([]Option{WithRankLevel([]int{0}, zapcore.DebugLevel, Off)})
	if !c.level.Enabled(zapcore.DebugLevel) {
		t.Error("rank 0 at Debug does not enable Debug")
	}
}

// An option made before the launcher's variables are set (a package
// variable, say) reads the rank when a core is built with it.
func TestWithRankLevelReadsRankWhenApplied(t *testing.T) {
	cleanEnv(t)
	ranks := []int{0}
	opt := WithRankLevel(ranks, zapcore.InfoLevel, Off)
	ranks[0] = 3 // the caller's slice is the caller's
	t.Setenv("RANK", "3")
	if c := newConfig([]Option{opt}); c.level.Enabled(zapcore.ErrorLevel) {
		t.Errorf("rank 3, set after the option was made: level %v, want Off", c.level)
	}
	t.Setenv("RANK", "0")
	if c := newConfig([]Option{opt}); !c.level.Enabled(zapcore.InfoLevel) {
		t.Errorf("rank 0: level %v, want Info", c.level)
	}
}

// The policy's Enabled is one comparison: no allocation, no lookup.
func TestRankLevelEnabledAllocatesNothing(t *testing.T) {
	cleanEnv(t)
	t.Setenv("RANK", "5")
	var le zapcore.LevelEnabler = RankLevel([]int{0}, zapcore.InfoLevel, Off)
	if n := testing.AllocsPerRun(100, func() { _ = le.Enabled(zapcore.ErrorLevel) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func BenchmarkRankLevelEnabled(b *testing.B) {
	b.Setenv("RANK", "5")
	var le zapcore.LevelEnabler = RankLevel([]int{0}, zapcore.InfoLevel, Off)
	for b.Loop() {
		_ = le.Enabled(zapcore.InfoLevel)
	}
}

// On a rank whose policy is Off, a bridged logging call costs no more than
// a disabled call of zap alone and reaches no provider.
func TestRankOffPaysNothing(t *testing.T) {
	cleanEnv(t)
	t.Setenv("RANK", "3")
	exp := &memExporter{}
	p := newTestProvider(t, withExporter(exp))
	allocs := func(l *zap.Logger) float64 {
		return testing.AllocsPerRun(100, func() { l.Error("failed", zap.Int("step", 1), zap.String("phase", "train")) })
	}
	// zap's own cost of a disabled call: the variadic fields escape.
	plain := allocs(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), Off)))
	bridged := allocs(zap.New(NewCore(WithLoggerProvider(p), WithRankLevel([]int{0}, zapcore.InfoLevel, Off))))
	if bridged > plain {
		t.Errorf("%v allocations per call, zap alone %v", bridged, plain)
	}
	_ = p.Shutdown(t.Context())
	if s := p.Stats(); s.Emitted != 0 {
		t.Errorf("stats %v", s)
	}
}
