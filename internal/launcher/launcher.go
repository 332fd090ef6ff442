// Package launcher reads where this process sits in a distributed job, as
// its launcher told it through the environment: for the bridge's rank
// levels and the pipeline's resource alike.
package launcher

import (
	"os"
	"strconv"
)

// Rank is where this process sits in a distributed job, as its launcher
// told it through the environment.
type Rank struct {
	Rank      int    // global rank, 0 to WorldSize-1
	LocalRank int    // rank on this node; -1 when the launcher does not say
	WorldSize int    // number of processes; -1 when the launcher does not say
	Launcher  string // "torchrun", "openmpi" or "slurm"
}

// launchers lists each launcher's variables, most specific first: torchrun
// and mpirun are often started inside a Slurm allocation, where
// SLURM_PROCID numbers the Slurm tasks rather than the training processes.
// A launcher's variables are read together, never mixed with another's.
var launchers = []struct {
	name, rank, local, size string
}{
	{"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE"},
	{"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
}

// Lookup reads the rank from the first launcher whose rank variable is
// set to a non-negative integer: torchrun's RANK, LOCAL_RANK and WORLD_SIZE,
// Open MPI's OMPI_COMM_WORLD_RANK, _LOCAL_RANK and _SIZE, then Slurm's
// SLURM_PROCID, SLURM_LOCALID and SLURM_NTASKS. It reports false for a
// process started by none of them.
func Lookup() (Rank, bool) {
	for _, l := range launchers {
		r, ok := envInt(l.rank)
		if !ok {
			continue
		}
		rank := Rank{Rank: r, LocalRank: -1, WorldSize: -1, Launcher: l.name}
		if n, ok := envInt(l.local); ok {
			rank.LocalRank = n
		}
		if n, ok := envInt(l.size); ok {
			rank.WorldSize = n
		}
		return rank, true
	}
	return Rank{}, false
}

// envInt reads a non-negative integer variable.
func envInt(key string) (int, bool) {
	n, err := strconv.Atoi(os.Getenv(key))
	return n, err == nil && n >= 0
}
