// Command runratios prints, for raw BenchmarkCall or BenchmarkBusyRank
// output, each run's zaplens CPU over the same run's zap alone and
// official bridge, and their median and range: a ratio taken within one
// run cancels most of a shared machine's drift, which moves every
// contender of a run alike.
//
//	go run ./cmd/runratios results/issue26/call-final-old.txt results/issue26/call-final-new.txt
//	go run ./cmd/runratios -busy results/issue26/busy-final-new.txt
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/zaplens/zaplens/benchmarks/internal/benchraw"
)

// A ratio is a zaplens contender's value of one measure over another
// contender's.
type ratio struct {
	name        string
	mine, unit  string
	against     string
	againstUnit string
}

var callRatios = []ratio{
	{"CPU per line, over zap alone's", "zaplens", "cpu-ns/op", "zap", "cpu-ns/op"},
	{"CPU per delivered line, over the official bridge's", "zaplens", "cpu-ns/delivered", "official", "cpu-ns/delivered"},
	{"the caller's own CPU, over zap alone's", "zaplens", "caller-cpu-ns/op", "zap", "caller-cpu-ns/op"},
	// Like for like: the official bridge's tee prints no ids.
	{"without the ids in the JSON line, CPU per delivered line, over the official bridge's", "zaplens-noids", "cpu-ns/delivered", "official", "cpu-ns/delivered"},
	{"without the ids in the JSON line, CPU per line, over zap alone's", "zaplens-noids", "cpu-ns/op", "zap", "cpu-ns/op"},
}

var busyRatios = []ratio{
	{"CPU per delivered line, over the official bridge's", "zaplens", "cpu-ns/delivered", "official", "cpu-ns/delivered"},
	{"CPU per line, over zap alone's", "zaplens", "cpu-ns/line", "zap", "cpu-ns/line"},
}

func main() {
	busy := flag.Bool("busy", false, "the input is BenchmarkBusyRank's (a row per compute)")
	flag.Parse()
	ratios, rowKeys := callRatios, []string(nil)
	if *busy {
		ratios, rowKeys = busyRatios, []string{"compute"}
	}
	for _, name := range flag.Args() {
		runs, err := benchraw.Read(name, false, rowKeys...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(name)
		for _, row := range sortedRows(runs, ratios[0].unit) {
			for _, r := range ratios {
				mine, theirs := runs[r.unit][row][r.mine], runs[r.againstUnit][row][r.against]
				if len(mine) == 0 || len(mine) != len(theirs) {
					continue // a contender missing from a run: no pairs
				}
				per := make([]float64, len(mine))
				for i := range mine {
					per[i] = mine[i] / theirs[i]
				}
				fmt.Printf("  %s %s: median %.3f, %.3f to %.3f, runs %.3f\n", row, r.name, median(per), slices.Min(per), slices.Max(per), per)
			}
		}
	}
}

func sortedRows(runs benchraw.Runs, unit string) []string {
	var rows []string
	for row := range runs[unit] {
		rows = append(rows, row)
	}
	sort.Strings(rows)
	return rows
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	return (s[(n-1)/2] + s[n/2]) / 2
}
