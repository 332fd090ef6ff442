package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/zaplens/zaplens/benchmarks/internal/benchraw"
)

// Each run's ratio pairs the contenders' values of the same rank; a
// contender the file lacks leaves its ratios empty; unequal run counts
// cannot be paired.
func TestPerRun(t *testing.T) {
	ratios := []ratio{{"over zap", "zaplens", "cpu-ns/op", "zap"}, {"noids over zap", "zaplens-noids", "cpu-ns/op", "zap"}}
	runs := benchraw.Runs{"cpu-ns/op": {"Call": {
		"zap":     {100, 200, 400},
		"zaplens": {150, 500, 400},
	}}}
	s, err := perRun(runs, ratios)
	if err != nil {
		t.Fatal(err)
	}
	if got := s["Call"][0]; !slices.Equal(got, []float64{1.5, 2.5, 1}) {
		t.Errorf("ratios %v, want 1.5, 2.5 and 1, run by run", got)
	}
	if got := s["Call"][1]; got != nil {
		t.Errorf("ratios %v of a contender the file lacks, want none", got)
	}
	runs["cpu-ns/op"]["Call"]["zaplens"] = []float64{150, 500}
	if _, err := perRun(runs, ratios); err == nil || !strings.Contains(err.Error(), "cannot be paired") {
		t.Errorf("unequal run counts: %v, want them refused", err)
	}
}
