// Command benchtable turns benchstat's CSV output for the benchmarks of this
// module into the Markdown tables of docs/benchmark-results.md,
// docs/benchmark-call-time.md and docs/benchmark-own-provider.md (the pages
// docs/performance.md sums up): by default one row
// per workload of BenchmarkLine or BenchmarkLever with every contender's
// time, bytes and allocations per line and zaplens's ratios to the official
// bridge and to zap alone; with -call, one row per measure of BenchmarkCall
// and one column per contender; with -busy, one row per busy-rank scenario
// and bridge. -raw names the benchmarks' own output, from which the peak
// heap and the share delivered are also given as ranges over the runs.
//
//	benchstat -col /bridge -row /case -format csv line.txt | benchtable
//	benchstat -col /bridge -format csv call.txt | benchtable -call -raw call.txt
//	benchstat -col /bridge -row /compute -format csv busy.txt | benchtable -busy -raw busy.txt
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/zaplens/zaplens/benchmarks/internal/benchraw"
)

// A cell is benchstat's median of one metric and its confidence interval.
type cell struct {
	v  float64
	ci string
	ok bool
}

// A table is what benchstat printed: per unit, per row, per column.
type table struct {
	units []string
	rows  []string
	cols  []string
	cells map[string]map[string]map[string]cell // unit, row, col
	raw   benchraw.Runs
}

func main() {
	busy := flag.Bool("busy", false, "the input is BenchmarkBusyRank's")
	call := flag.Bool("call", false, "the input is BenchmarkCall's")
	rawFile := flag.String("raw", "", "the benchmarks' output, for ranges over the runs")
	flag.Parse()
	t, err := parse(os.Stdin)
	if err == nil && *rawFile != "" {
		// A result's row is its compute=, case= or lever= part if it has
		// one, else its name before the first slash with the GOMAXPROCS
		// suffix, as benchstat names it; its column, its bridge= part.
		t.raw, err = benchraw.Read(*rawFile, true, "compute", "case", "lever")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	switch {
	case *busy:
		writeBusy(os.Stdout, t)
	case *call:
		writeCall(os.Stdout, t)
	default:
		writeLines(os.Stdout, t)
	}
}

// parse reads benchstat's CSV: sections separated by blank lines, each a
// row of column names, a row of units, then one row per benchmark row.
func parse(r io.Reader) (*table, error) {
	t := &table{cells: map[string]map[string]map[string]cell{}}
	seenRow, seenCol := map[string]bool{}, map[string]bool{}
	var section []string
	flush := func() error {
		defer func() { section = section[:0] }()
		lines := section
		for len(lines) > 0 && !strings.HasPrefix(lines[0], ",") {
			lines = lines[1:] // the goos, goarch, pkg and cpu lines
		}
		if len(lines) < 2 {
			return nil
		}
		cr := csv.NewReader(strings.NewReader(strings.Join(lines, "\n")))
		cr.FieldsPerRecord = -1
		recs, err := cr.ReadAll()
		if err != nil {
			return err
		}
		names, units := recs[0], recs[1]
		unit := units[1]
		if t.cells[unit] == nil {
			t.units = append(t.units, unit)
			t.cells[unit] = map[string]map[string]cell{}
		}
		for _, rec := range recs[2:] {
			row := rec[0]
			if row == "geomean" {
				continue
			}
			if !seenRow[row] {
				seenRow[row] = true
				t.rows = append(t.rows, row)
			}
			if t.cells[unit][row] == nil {
				t.cells[unit][row] = map[string]cell{}
			}
			for i := 1; i < len(names) && i < len(rec); i++ {
				col := names[i]
				if col == "" || units[i] != unit {
					continue
				}
				if !seenCol[col] {
					seenCol[col] = true
					t.cols = append(t.cols, col)
				}
				v, err := strconv.ParseFloat(rec[i], 64)
				if err != nil {
					continue
				}
				c := cell{v: v, ok: true}
				if i+1 < len(rec) && units[i+1] == "CI" {
					c.ci = rec[i+1]
				}
				t.cells[unit][row][col] = c
			}
		}
		return nil
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		section = append(section, line)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return t, sc.Err()
}

func (t *table) get(unit, row, col string) cell { return t.cells[unit][row][col] }

// order puts the contenders in the table's order, any other after them.
func (t *table) order(first ...string) []string {
	var out []string
	have := map[string]bool{}
	for _, c := range t.cols {
		have[c] = true
	}
	for _, c := range first {
		if have[c] {
			out = append(out, c)
			delete(have, c)
		}
	}
	for _, c := range t.cols {
		if have[c] {
			out = append(out, c)
		}
	}
	return out
}

func writeLines(w io.Writer, t *table) {
	cols := t.order("zap", "official", "zaplens", "sdk-floor")
	writeHead(w, "case", cols, "zaplens / official", "zaplens / zap", "zaplens's own share")
	for _, row := range t.rows {
		fmt.Fprintf(w, "| %s |", row)
		for _, c := range cols {
			fmt.Fprintf(w, " %s |", t.triple(row, c))
		}
		fmt.Fprintf(w, " %s | %s | %s |\n", t.ratio(row, "zaplens", "official"), t.ratio(row, "zaplens", "zap"), t.own(row))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each cell: median wall time per line · the process's CPU time per line (each ± benchstat's 95% interval) · bytes allocated per line · allocations per line. Ratios: wall · CPU · bytes · allocations. zaplens's own share: (zaplens − zap − sdk-floor) / zaplens, in CPU time.")
}

// writeHead writes a table's head: a column named first, then one per
// contender in cols and one per ratio in ratios, these right-aligned.
func writeHead(w io.Writer, first string, cols []string, ratios ...string) {
	fmt.Fprintf(w, "| %s |", first)
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c)
	}
	for _, r := range ratios {
		fmt.Fprintf(w, " %s |", r)
	}
	fmt.Fprint(w, "\n|---|")
	for range len(cols) + len(ratios) {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
}

// triple formats one contender's ns/op, B/op and allocs/op.
func (t *table) triple(row, col string) string {
	ns := t.get("sec/op", row, col)
	if !ns.ok {
		return "—"
	}
	b, a := t.get("B/op", row, col), t.get("allocs/op", row, col)
	s := withCI(ns)
	if cpu := t.get("cpu-sec/op", row, col); cpu.ok {
		s += " · " + withCI(cpu)
	}
	return fmt.Sprintf("%s · %s B · %s", s, fmtNum(b.v, b.ok), fmtNum(a.v, a.ok))
}

func withCI(c cell) string {
	s := fmtNs(c.v * 1e9)
	if c.ci != "" && c.ci != "∞" {
		s += " ±" + c.ci
	}
	return s
}

func (t *table) ratio(row, num, den string) string {
	var parts []string
	for _, unit := range []string{"sec/op", "cpu-sec/op", "B/op", "allocs/op"} {
		parts = append(parts, ratioOf(t.get(unit, row, num), t.get(unit, row, den)))
	}
	if parts[0] == "—" {
		return "—"
	}
	return strings.Join(parts, " · ")
}

// own is the CPU time zaplens adds beyond zap alone and the SDK floor, as a
// share of zaplens's CPU time.
func (t *table) own(row string) string {
	const unit = "cpu-sec/op"
	z, base, floor := t.get(unit, row, "zaplens"), t.get(unit, row, "zap"), t.get(unit, row, "sdk-floor")
	if !z.ok || !base.ok || !floor.ok || z.v == 0 {
		return "—"
	}
	own := z.v - base.v - floor.v
	return fmt.Sprintf("%s (%.0f%%)", fmtNs(own*1e9), 100*own/z.v)
}

func writeBusy(w io.Writer, t *table) {
	cols := t.order("zap", "official", "zaplens")
	fmt.Fprintln(w, "| between steps | contender | CPU per delivered line | CPU per line logged | delivered | sent twice | lost, not counted | peak heap | lines/s on the caller |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, row := range t.rows {
		label := "compute " + row
		if row == "none" {
			label = "none (back to back)"
		}
		for _, c := range cols {
			ls := t.get("lines/s", row, c)
			if !ls.ok {
				continue
			}
			name := c
			if c == "zap" {
				name = "zap alone"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, name,
				t.dur("cpu-sec/delivered", row, c), t.dur("cpu-sec/line", row, c),
				t.percent("%delivered", row, c), t.spanned("duplicates", row, c), t.spanned("uncounted-losses", row, c),
				t.mib("peak-heap-MiB", row, c), t.count("lines/s", row, c))
		}
		fmt.Fprintf(w, "| %s | zaplens / official | %s | %s | | | | %s | %s |\n", label,
			t.ratio1("cpu-sec/delivered", row, "zaplens", "official"), t.ratio1("cpu-sec/line", row, "zaplens", "official"),
			t.ratio1("peak-heap-MiB", row, "zaplens", "official"), t.ratio1("lines/s", row, "zaplens", "official"))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Medians over the runs (± benchstat's 95% interval where it has one); peak heap, delivered, duplicates and losses also as min–max over the runs. CPU is the whole process's user + system time (getrusage) from the first line to the end of Shutdown, so it includes batching, encoding and OTLP export; the receiver runs in another process.")
}

// writeCall writes BenchmarkCall's one row per measure, one column per
// contender.
func writeCall(w io.Writer, t *table) {
	cols := t.order("zap", "official", "zaplens")
	row := ""
	if len(t.rows) > 0 {
		row = t.rows[0]
	}
	var heads []string
	for _, c := range cols {
		if c == "zap" {
			c = "zap alone"
		}
		heads = append(heads, c)
	}
	writeHead(w, "measure", heads, "zaplens / official", "zaplens / zap alone")
	measures := []struct {
		label, unit string
		format      func(unit, row, col string) string
	}{
		{"wall time per call (ns/op)", "sec/op", t.dur},
		{"wall time per call, least disturbed run (lowest ns/op)", "ns/op", t.rawMin},
		{"the calling goroutine's own CPU per call", "caller-cpu-sec/op", t.dur},
		{"the calling goroutine's wait for a CPU, per call", "caller-runq-sec/op", t.dur},
		{"time runnable but off the CPUs, per call, all the process's threads (runq)", "runq-sec/op", t.dur},
		{"allocations per call, whole process, during the loop (allocs/op)", "allocs/op", t.count},
		{"bytes allocated per call, same (B/op)", "B/op", t.count},
		{"allocations per line, whole process, to the end of the flush", "total-allocs/op", t.float},
		{"CPU per line logged, whole process, to the end of the flush", "cpu-sec/op", t.dur},
		{"CPU per delivered line", "cpu-sec/delivered", t.dur},
		{"the receiver's CPU per delivered line (its own process: not the contender's)", "receiver-cpu-sec/delivered", t.dur},
		{"delivered", "%delivered", t.percent},
		{"sent twice, per 1,000 lines", "dup/1k", t.spanned},
		{"peak heap above the start", "peak-heap-MiB", t.mib},
	}
	for _, m := range measures {
		fmt.Fprintf(w, "| %s |", m.label)
		for _, c := range cols {
			fmt.Fprintf(w, " %s |", m.format(m.unit, row, c))
		}
		if m.unit == "%delivered" || m.unit == "dup/1k" || m.unit == "receiver-cpu-sec/delivered" {
			fmt.Fprintln(w, " | |") // not a cost
			continue
		}
		fmt.Fprintf(w, " %s | %s |\n", t.ratio1(m.unit, row, "zaplens", "official"), t.ratio1(m.unit, row, "zaplens", "zap"))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Medians over the runs (± benchstat's 95% interval where it has one); peak heap, delivered and duplicates also as min–max over the runs.")
}

// ratio1 is num/den of one unit, "—" if either is missing.
func (t *table) ratio1(unit, row, num, den string) string {
	n, d := t.get(unit, row, num), t.get(unit, row, den)
	if _, ok := t.cells[unit]; !ok { // a unit only the raw runs have: their lowest
		nlo, _, nok := t.raw.Span(unit, row, num)
		dlo, _, dok := t.raw.Span(unit, row, den)
		n, d = cell{v: nlo, ok: nok}, cell{v: dlo, ok: dok}
	}
	return ratioOf(n, d)
}

// ratioOf is n/d to two places, "—" if either is missing.
func ratioOf(n, d cell) string {
	switch {
	case !n.ok || !d.ok:
		return "—"
	case d.v == 0 && n.v == 0:
		return "="
	case d.v == 0:
		return "∞"
	}
	return fmt.Sprintf("%.2f", n.v/d.v)
}

func (t *table) dur(unit, row, col string) string {
	c := t.get(unit, row, col)
	if !c.ok {
		return "—"
	}
	return withCI(c)
}

// rawMin is the lowest of the raw runs' values, in nanoseconds.
func (t *table) rawMin(unit, row, col string) string {
	lo, _, ok := t.raw.Span(unit, row, col)
	if !ok {
		return "—"
	}
	return fmtNs(lo)
}

func (t *table) count(unit, row, col string) string {
	c := t.get(unit, row, col)
	return fmtNum(c.v, c.ok)
}

func (t *table) float(unit, row, col string) string {
	c := t.get(unit, row, col)
	if !c.ok {
		return "—"
	}
	return strconv.FormatFloat(c.v, 'f', 2, 64)
}

// spanned is the median with the range over the runs when they differ.
func (t *table) spanned(unit, row, col string) string {
	return t.withRange(unit, row, col, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }, "%g–%g", false)
}

func (t *table) percent(unit, row, col string) string {
	return t.withRange(unit, row, col, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "%" }, "%.1f–%.1f", false)
}

// mib always shows its range: peak heaps differ from run to run.
func (t *table) mib(unit, row, col string) string {
	return t.withRange(unit, row, col, func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " MiB" }, "%.1f–%.1f", true)
}

// withRange is the median as format writes it, then the range over the
// runs in rangeFormat: always, or only when the runs differ.
func (t *table) withRange(unit, row, col string, format func(float64) string, rangeFormat string, always bool) string {
	c := t.get(unit, row, col)
	if !c.ok {
		return "—"
	}
	s := format(c.v)
	if lo, hi, ok := t.raw.Span(unit, row, col); ok && (always || lo != hi) {
		s += " (" + fmt.Sprintf(rangeFormat, lo, hi) + ")"
	}
	return s
}

func fmtNs(ns float64) string {
	switch {
	case ns >= 10000:
		return fmt.Sprintf("%.1f µs", ns/1000)
	case ns >= 100:
		return fmt.Sprintf("%.0f ns", ns)
	default:
		return fmt.Sprintf("%.1f ns", ns)
	}
}

func fmtNum(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
}
