// Command charts draws the SVG charts of docs/performance.md and the README
// from the raw output of the benchmarks (benchmarks/results/), the same files
// the tables come from; each bar is the median over the runs, as benchstat
// gives it, and its label the value.
//
//	go run ./cmd/charts -call results/call.txt -busy results/busy.txt -out ../docs/img
//
// It writes:
//
//   - call.svg: the logging call's wall time and the CPU per delivered line
//     (zap alone: per line logged; it delivers nothing), BenchmarkCall;
//   - delivered.svg: the share of lines the receiver got, in the 100,000-line
//     burst of BenchmarkCall and the two busy-rank scenarios;
//   - heap.svg: the peak heap in the same three scenarios.
package main

import (
	"flag"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/zaplens/zaplens/benchmarks/internal/benchraw"
)

func main() {
	callFile := flag.String("call", "results/call.txt", "BenchmarkCall's raw output")
	busyFile := flag.String("busy", "results/busy.txt", "BenchmarkBusyRank's raw output")
	out := flag.String("out", "../docs/img", "directory of the SVG files")
	flag.Parse()
	if err := run(*callFile, *busyFile, *out); err != nil {
		fmt.Fprintln(os.Stderr, "charts:", err)
		os.Exit(1)
	}
}

// run draws the charts from the raw files. A result's scenario is the
// compute= part of its name, else the benchmark's name without
// "Benchmark" and the GOMAXPROCS suffix; its contender, the bridge= part.
func run(callFile, busyFile, out string) error {
	call, err := benchraw.Read(callFile, false, "compute")
	if err != nil {
		return err
	}
	busy, err := benchraw.Read(busyFile, false, "compute")
	if err != nil {
		return err
	}
	contenders := []string{"zap", "official", "zaplens"}
	names := map[string]string{"zap": "zap alone", "official": "official bridge", "zaplens": "zaplens"}

	// The call: two measures, three contenders; zap alone delivers nothing,
	// so its CPU is per line logged.
	cpu := map[string]float64{"zap": benchraw.Median(call["cpu-ns/op"]["Call"]["zap"])}
	for _, c := range contenders[1:] {
		cpu[c] = benchraw.Median(call["cpu-ns/delivered"]["Call"][c])
	}
	callChart := chart{
		title:  "The logging call, 100,000 lines (" + filepath.Base(callFile) + ")",
		ylabel: "ns",
		groups: []string{"wall time per call", "CPU per delivered line"},
	}
	for _, c := range contenders {
		callChart.series = append(callChart.series, series{names[c], []float64{benchraw.Median(call["ns/op"]["Call"][c]), cpu[c]}})
	}

	scenarios := []struct {
		name string
		r    benchraw.Runs
		row  string
	}{
		{"burst of 100,000 (call.txt)", call, "Call"},
		{"busy rank, 0.5 s compute", busy, "500ms"},
		{"busy rank, back to back", busy, "none"},
	}
	delivered := chart{
		title:  "Lines delivered, each on its default pipeline",
		ylabel: "% delivered",
		format: "%.1f%%",
		ymax:   110,
	}
	heap := chart{
		title:  "Peak heap above the start",
		ylabel: "MiB",
		format: "%.1f",
	}
	for _, s := range scenarios {
		delivered.groups = append(delivered.groups, s.name)
		heap.groups = append(heap.groups, s.name)
	}
	for _, c := range contenders {
		var d, h []float64
		for _, s := range scenarios {
			d = append(d, benchraw.Median(s.r["%delivered"][s.row][c]))
			h = append(h, benchraw.Median(s.r["peak-heap-MiB"][s.row][c]))
		}
		if c != "zap" { // zap alone ships nothing
			delivered.series = append(delivered.series, series{names[c], d})
		}
		heap.series = append(heap.series, series{names[c], h})
	}

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, c := range map[string]chart{"call.svg": callChart, "delivered.svg": delivered, "heap.svg": heap} {
		if err := c.save(filepath.Join(out, name)); err != nil {
			return err
		}
	}
	return nil
}

// label formats v as format says; an empty format writes it exactly, as
// a median of two runs can end in .5.
func label(format string, v float64) string {
	if format == "" {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprintf(format, v)
}

type series struct {
	name   string
	values []float64 // one per group
}

type chart struct {
	title, ylabel string
	groups        []string
	series        []series
	format        string  // of each bar's label; "": exact
	ymax          float64 // 0: the largest bar and a margin
}

// colors: zap alone grey, the official bridge orange, zaplens blue.
var colors = map[string]color.Color{
	"zap alone":       color.RGBA{150, 150, 150, 255},
	"official bridge": color.RGBA{230, 140, 40, 255},
	"zaplens":         color.RGBA{40, 110, 200, 255},
}

func (c chart) save(name string) error {
	p := plot.New()
	p.Title.Text = c.title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Y.Label.Text = c.ylabel
	p.Y.Min = 0
	p.X.Tick.Label.Font.Size = vg.Points(11)
	p.Y.Tick.Label.Font.Size = vg.Points(10)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(11)
	p.Add(plotter.NewGrid())
	width := vg.Points(40)
	largest := 0.0
	for i, s := range c.series {
		bars, err := plotter.NewBarChart(plotter.Values(s.values), width)
		if err != nil {
			return err
		}
		offset := width * vg.Length(float64(i)-float64(len(c.series)-1)/2)
		bars.Offset = offset
		bars.Color = colors[s.name]
		bars.LineStyle.Width = 0
		p.Add(bars)
		p.Legend.Add(s.name, bars)

		var xys plotter.XYs
		var labels []string
		for g, v := range s.values {
			xys = append(xys, plotter.XY{X: float64(g), Y: v})
			labels = append(labels, label(c.format, v))
			largest = max(largest, v)
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
		if err != nil {
			return err
		}
		for j := range l.TextStyle {
			l.TextStyle[j].XAlign = draw.XCenter
			l.TextStyle[j].YAlign = draw.YBottom
			l.TextStyle[j].Font.Size = vg.Points(10)
		}
		l.Offset = vg.Point{X: offset, Y: vg.Points(2)}
		p.Add(l)
	}
	p.Y.Max = c.ymax
	if p.Y.Max == 0 {
		p.Y.Max = largest * 1.25 // room for the labels and the legend
	}
	p.NominalX(c.groups...)
	p.X.Min, p.X.Max = -0.6, float64(len(c.groups))-0.4
	return p.Save(vg.Points(float64(200*len(c.groups)+120)), vg.Points(340), name)
}
