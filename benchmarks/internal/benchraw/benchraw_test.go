package benchraw

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Read takes every result line, a name with no GOMAXPROCS suffix too, and
// nothing else.
func TestRead(t *testing.T) {
	name := filepath.Join(t.TempDir(), "call.txt")
	raw := `# a header line
goos: linux
BenchmarkCall/bridge=zap-2         	  100000	      1231 ns/op	      1489 cpu-ns/op
BenchmarkCall/bridge=zaplens-noids-2	  100000	      2000 ns/op	      2400 cpu-ns/op
BenchmarkCall/bridge=zaplens-noids 	  100000	      2100 ns/op	      2500 cpu-ns/op
PASS
`
	if err := os.WriteFile(name, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(name, false)
	if err != nil {
		t.Fatal(err)
	}
	want := Runs{
		"ns/op":     {"Call": {"zap": {1231}, "zaplens-noids": {2000, 2100}}},
		"cpu-ns/op": {"Call": {"zap": {1489}, "zaplens-noids": {2400, 2500}}},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("Read = %v, want %v", r, want)
	}
	if lo, hi, ok := r.Span("cpu-ns/op", "Call", "zaplens-noids"); lo != 2400 || hi != 2500 || !ok {
		t.Errorf("Span = %v, %v, %v; want 2400, 2500, true", lo, hi, ok)
	}
	if _, _, ok := r.Span("cpu-ns/op", "Call", "official"); ok {
		t.Error("Span of no runs is ok")
	}
}

// The GOMAXPROCS suffix is a dash and a number; testing leaves it out at
// GOMAXPROCS=1, and a contender's name may hold a dash of its own.
func TestRowColSuffix(t *testing.T) {
	for _, c := range []struct {
		name      string
		withProcs bool
		rowKeys   []string
		row, col  string
	}{
		{"BenchmarkCall/bridge=zap-2", false, nil, "Call", "zap"},
		{"BenchmarkCall/bridge=zap-2", true, nil, "Call-2", "zap"},
		{"BenchmarkCall/bridge=zaplens-noids-2", false, nil, "Call", "zaplens-noids"},
		{"BenchmarkCall/bridge=zaplens-noids-16", true, nil, "Call-16", "zaplens-noids"},
		{"BenchmarkCall/bridge=zaplens-noids", false, nil, "Call", "zaplens-noids"},
		{"BenchmarkCall/bridge=zaplens-noids", true, nil, "Call", "zaplens-noids"},
		{"BenchmarkCall/bridge=zap", true, nil, "Call", "zap"},
		{"BenchmarkBusyRank/compute=500ms/bridge=official-2", false, []string{"compute"}, "500ms", "official"},
		{"BenchmarkBusyRank/compute=500ms/bridge=zaplens-spool", true, []string{"compute"}, "500ms", "zaplens-spool"},
		{"BenchmarkLine/case=1-zap-field/bridge=zap-2", false, []string{"case"}, "1-zap-field", "zap"},
	} {
		row, col := rowCol(c.name, c.withProcs, c.rowKeys)
		if row != c.row || col != c.col {
			t.Errorf("rowCol(%q, %v) = %q, %q; want %q, %q", c.name, c.withProcs, row, col, c.row, c.col)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		vs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 2, 3}, 2.5},
	} {
		if got := Median(c.vs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.vs, got, c.want)
		}
	}
}
