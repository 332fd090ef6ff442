// Command benchtable turns benchstat's CSV output for the benchmarks of this
// module into the Markdown tables of docs/benchmarks.md: one row per
// workload with every contender's time, bytes and allocations per line and
// zaplens's ratios to the official bridge and to zap alone; with -busy, one
// row per busy-rank scenario and bridge.
//
//	benchstat -col /bridge -row /case -format csv line.txt | benchtable
//	benchstat -col /bridge -row /compute -format csv busy.txt | benchtable -busy
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
}

func main() {
	busy := flag.Bool("busy", false, "the input is BenchmarkBusyRank's")
	flag.Parse()
	t, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if *busy {
		writeBusy(os.Stdout, t)
	} else {
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
	fmt.Fprint(w, "| case |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprintln(w, " zaplens / official | zaplens / zap | zaplens's own share |")
	fmt.Fprint(w, "|---|")
	for range cols {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w, "---:|---:|---:|")
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
		n, d := t.get(unit, row, num), t.get(unit, row, den)
		switch {
		case !n.ok || !d.ok:
			parts = append(parts, "—")
		case d.v == 0 && n.v == 0:
			parts = append(parts, "=")
		case d.v == 0:
			parts = append(parts, "∞")
		default:
			parts = append(parts, fmt.Sprintf("%.2f", n.v/d.v))
		}
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
	cols := t.order("official", "zaplens")
	fmt.Fprintln(w, "| case 8: between steps | bridge | lines/s on the caller | CPU ms per 1,000 lines | per 1,000 delivered | delivered | losses not counted |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for _, row := range t.rows {
		label := "compute " + row
		if row == "none" {
			label = "no compute"
		}
		for _, c := range cols {
			ls := t.get("lines/s", row, c)
			if !ls.ok {
				continue
			}
			cpu := t.get("cpu-ms/1k-lines", row, c)
			cpuDel := t.get("cpu-ms/1k-delivered", row, c)
			del := t.get("%delivered", row, c)
			unc := t.get("uncounted-losses", row, c)
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s%% | %s |\n", label, c,
				fmtNum(ls.v, ls.ok), fmtFloat(cpu.v, cpu.ok), fmtFloat(cpuDel.v, cpuDel.ok), fmtFloat(del.v, del.ok), fmtNum(unc.v, unc.ok))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Medians over the runs. CPU is the whole process's user + system time (getrusage) from the first line to the end of Shutdown, so it includes batching and OTLP export; the receiver runs in another process.")
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

func fmtFloat(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
