// Package benchraw reads the benchmarks' raw go test -bench output, as
// results/ keeps it, into every run's value of each measure, for the
// commands that make tables and charts of them.
package benchraw

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Runs holds every run's value of each measure: by unit, row and column.
type Runs map[string]map[string]map[string][]float64

// Read reads a raw file. A result's column is its bridge= part; its row is
// its first part keyed by one of rowKeys, else the benchmark's name without
// "Benchmark", with the GOMAXPROCS suffix ("-2") when withProcs, as
// benchstat names it.
func Read(name string, withProcs bool, rowKeys ...string) (Runs, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := Runs{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "Benchmark") {
			continue
		}
		row, col := rowCol(fs[0], withProcs, rowKeys)
		for i := 2; i+1 < len(fs); i += 2 {
			if v, err := strconv.ParseFloat(fs[i], 64); err == nil {
				r.add(fs[i+1], row, col, v)
			}
		}
	}
	return r, sc.Err()
}

// rowCol reads a result's name, "BenchmarkCall/bridge=zap-2". The
// GOMAXPROCS suffix is a dash and a number, which testing leaves out when
// GOMAXPROCS is 1: a name's own dash ("bridge=zaplens-noids") is no
// suffix.
func rowCol(name string, withProcs bool, rowKeys []string) (row, col string) {
	parts := strings.Split(name, "/")
	last := parts[len(parts)-1]
	procs := ""
	if i := strings.LastIndex(last, "-"); i > 0 {
		if _, err := strconv.Atoi(last[i+1:]); err == nil {
			procs = last[i:]
			parts[len(parts)-1] = last[:i]
		}
	}
	row = strings.TrimPrefix(parts[0], "Benchmark")
	if withProcs {
		row += procs
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch {
		case k == "bridge":
			col = v
		case slices.Contains(rowKeys, k):
			row = v
		}
	}
	return row, col
}

func (r Runs) add(unit, row, col string, v float64) {
	if r[unit] == nil {
		r[unit] = map[string]map[string][]float64{}
	}
	if r[unit][row] == nil {
		r[unit][row] = map[string][]float64{}
	}
	r[unit][row][col] = append(r[unit][row][col], v)
}

// Median is benchstat's: the middle value, or the mean of the two middle
// ones; 0 for none.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Span is the lowest and highest of a measure over the runs; ok is false
// when there are none.
func (r Runs) Span(unit, row, col string) (lo, hi float64, ok bool) {
	vs := r[unit][row][col]
	if len(vs) == 0 {
		return 0, 0, false
	}
	return slices.Min(vs), slices.Max(vs), true
}
