package zaplens

import (
	"slices"

	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens/internal/launcher"
)

// Rank is where this process sits in a distributed job, as its launcher
// told it through the environment.
type Rank struct {
	Rank      int    // global rank, 0 to WorldSize-1
	LocalRank int    // rank on this node; -1 when the launcher does not say
	WorldSize int    // number of processes; -1 when the launcher does not say
	Launcher  string // "torchrun", "openmpi" or "slurm"
}

// LookupRank reads the rank from the first launcher whose rank variable is
// set to a non-negative integer: torchrun's RANK, LOCAL_RANK and WORLD_SIZE,
// Open MPI's OMPI_COMM_WORLD_RANK, _LOCAL_RANK and _SIZE, then Slurm's
// SLURM_PROCID, SLURM_LOCALID and SLURM_NTASKS. It reports false for a
// process started by none of them.
func LookupRank() (Rank, bool) {
	r, ok := launcher.Lookup()
	return Rank(r), ok
}

// Off is a level no entry reaches: a bridge at Off sends nothing, and its
// Check returns at the first comparison.
const Off = zapcore.InvalidLevel

// RankLevel is the usual policy of a training job: level on the listed
// ranks, others on every other rank. RankLevel([]int{0}, zapcore.InfoLevel,
// zapcore.WarnLevel) sends Info and above from rank 0 and Warn and above
// from the rest; [Off] as others sends nothing from them. A process with no
// launcher variables is the only one of its job and counts as rank 0.
//
// The rank is read once, here, and the result is a plain zapcore.Level: its
// Enabled is one comparison, so a rank that bridges little pays nothing for
// the entries it skips.
func RankLevel(ranks []int, level, others zapcore.Level) zapcore.Level {
	r, _ := LookupRank() // the zero Rank is rank 0
	return levelForRank(r.Rank, ranks, level, others)
}

func levelForRank(rank int, ranks []int, level, others zapcore.Level) zapcore.Level {
	if slices.Contains(ranks, rank) {
		return level
	}
	return others
}

// WithRankLevel sets the bridge's level by [RankLevel]: level on the listed
// ranks, others everywhere else. It replaces [WithLevel], and the base core
// of a tee keeps its own level. The rank is read when a core is built with
// the option, not when the option is made: an option held in a package
// variable sees the launcher's variables all the same.
func WithRankLevel(ranks []int, level, others zapcore.Level) Option {
	ranks = slices.Clone(ranks)
	return optionFunc(func(c *config) { c.level = RankLevel(ranks, level, others) })
}
