// Command runratios prints, for raw BenchmarkCall or BenchmarkBusyRank
// output, each run's zaplens CPU over the same run's zap alone and
// official bridge, and their median and range: a ratio taken within one
// run cancels most of a shared machine's drift, which moves every
// contender of a run alike. A run's contenders are paired by their order
// in the file, so each must have run as many times as the others (runs
// made with -test.count come one contender's after another's: their pairs
// are of the same rank, not the same moment); with -pool, the runs of all
// the files named make one sample, one median.
//
//	go run ./cmd/runratios results/issue26/call-final-old.txt results/issue26/call-final-new.txt
//	go run ./cmd/runratios -pool results/issue26/call-noids.txt results/issue26/call-noids-2.txt
//	go run ./cmd/runratios -busy results/issue26/busy-final-new.txt
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/zaplens/zaplens/benchmarks/internal/benchraw"
)

// A ratio is a zaplens contender's value of one measure over another
// contender's value of the same measure.
type ratio struct {
	name       string
	mine, unit string
	against    string
}

var callRatios = []ratio{
	{"CPU per line, over zap alone's", "zaplens", "cpu-ns/op", "zap"},
	{"CPU per delivered line, over the official bridge's", "zaplens", "cpu-ns/delivered", "official"},
	{"the caller's own CPU, over zap alone's", "zaplens", "caller-cpu-ns/op", "zap"},
	// Like for like: the official bridge's tee prints no ids.
	{"without the ids in the JSON line, CPU per delivered line, over the official bridge's", "zaplens-noids", "cpu-ns/delivered", "official"},
	{"without the ids in the JSON line, CPU per line, over zap alone's", "zaplens-noids", "cpu-ns/op", "zap"},
}

var busyRatios = []ratio{
	{"CPU per delivered line, over the official bridge's", "zaplens", "cpu-ns/delivered", "official"},
	{"CPU per line, over zap alone's", "zaplens", "cpu-ns/line", "zap"},
}

// A sample is one file's, or with -pool all files', per-run ratios: by
// row, then by ratio, in the order of callRatios or busyRatios.
type sample map[string][][]float64

func main() {
	busy := flag.Bool("busy", false, "the input is BenchmarkBusyRank's (a row per compute)")
	pool := flag.Bool("pool", false, "the files' runs make one sample, with one median")
	flag.Parse()
	ratios, rowKeys := callRatios, []string(nil)
	if *busy {
		ratios, rowKeys = busyRatios, []string{"compute"}
	}
	pooled := sample{}
	for _, name := range flag.Args() {
		runs, err := benchraw.Read(name, false, rowKeys...)
		if err != nil {
			fail(err)
		}
		s, err := perRun(runs, ratios)
		if err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
		if !*pool {
			fmt.Println(name)
			s.print(ratios)
			continue
		}
		for row, byRatio := range s {
			if pooled[row] == nil {
				pooled[row] = make([][]float64, len(ratios))
			}
			for i, per := range byRatio {
				pooled[row][i] = append(pooled[row][i], per...)
			}
		}
	}
	if *pool {
		fmt.Println(strings.Join(flag.Args(), " + "))
		pooled.print(ratios)
	}
}

// perRun pairs each run's contenders by their order in the file.
func perRun(runs benchraw.Runs, ratios []ratio) (sample, error) {
	s := sample{}
	for row := range runs[ratios[0].unit] {
		s[row] = make([][]float64, len(ratios))
		for i, r := range ratios {
			mine, theirs := runs[r.unit][row][r.mine], runs[r.unit][row][r.against]
			if len(mine) == 0 || len(theirs) == 0 {
				continue // a contender this file does not have: print says so
			}
			if len(mine) != len(theirs) {
				return nil, fmt.Errorf("%s: %s has %d runs of %s and %s %d: they cannot be paired run by run",
					row, r.mine, len(mine), r.unit, r.against, len(theirs))
			}
			per := make([]float64, len(mine))
			for j := range mine {
				per[j] = mine[j] / theirs[j]
			}
			s[row][i] = per
		}
	}
	return s, nil
}

func (s sample) print(ratios []ratio) {
	for _, row := range slices.Sorted(maps.Keys(s)) {
		for i, r := range ratios {
			per := s[row][i]
			if len(per) == 0 {
				fmt.Printf("  %s %s: none: the file does not have runs of both %s and %s\n", row, r.name, r.mine, r.against)
				continue
			}
			fmt.Printf("  %s %s: median %.3f, %.3f to %.3f, runs %.3f\n", row, r.name, benchraw.Median(per), slices.Min(per), slices.Max(per), per)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "runratios:", err)
	os.Exit(1)
}
