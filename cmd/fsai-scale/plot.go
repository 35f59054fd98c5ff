package main

import (
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// series is one line of a plot.
type series struct {
	name string
	pts  plotter.XYs
}

// seriesOf collects (ranks, f(report)) for the runs that reported, leaving
// out values a log axis cannot show (f <= 0).
func seriesOf(name string, recs []record, f func(*report) float64) series {
	s := series{name: name}
	for i := range recs {
		if r := recs[i].rep; r != nil {
			if v := f(r); v > 0 && !math.IsNaN(v) {
				s.pts = append(s.pts, plotter.XY{X: float64(recs[i].ranks), Y: v})
			}
		}
	}
	return s
}

// ideal is the line a perfectly scaling time would follow from the first
// point of s: T(r0)*r0/N for strong scaling, T(r0) for weak scaling.
func ideal(s series, weak bool) series {
	out := series{name: "ideal"}
	if len(s.pts) == 0 {
		return out
	}
	x0, y0 := s.pts[0].X, s.pts[0].Y
	for _, p := range s.pts {
		y := y0
		if !weak {
			y = y0 * x0 / p.X
		}
		out.pts = append(out.pts, plotter.XY{X: p.X, Y: y})
	}
	return out
}

// plotFiles are the files plotStudy may write.
var plotFiles = []string{"times.png", "iter_time.png", "efficiency.png", "iterations.png"}

// plotStudy writes the plots of a study to dir and returns their file
// names: times.png (Tp, Ts, Tt), iter_time.png, efficiency.png and, for
// weak scaling, iterations.png (iterations against the problem size).
// Runs without a report are left out; with no report at all there is
// nothing to plot.
func plotStudy(dir, title string, recs []record, weak bool) ([]string, error) {
	for _, f := range plotFiles { // an earlier study's plots must not pass for this one's
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if !slices.ContainsFunc(recs, func(r record) bool { return r.rep != nil }) {
		return nil, nil
	}
	var ranks []float64
	for _, r := range recs {
		ranks = append(ranks, float64(r.ranks))
	}
	tt := seriesOf("Tt = Tp + Ts", recs, (*report).tt)
	it := seriesOf("time per iteration", recs, func(r *report) float64 { return r.IterS })
	plots := []struct {
		file, ylabel string
		lines        []series
	}{
		{"times.png", "seconds", []series{
			seriesOf("Tp (set-up)", recs, func(r *report) float64 { return r.SetupS }),
			seriesOf("Ts (solve)", recs, func(r *report) float64 { return r.SolveS }),
			tt, ideal(tt, weak)}},
		{"iter_time.png", "seconds per iteration", []series{it, ideal(it, weak)}},
	}
	var files []string
	for _, pl := range plots {
		p := newPlot(title, "MPI ranks", pl.ylabel)
		setTicksAxis(&p.X, ranks, func(v float64) string { return strconv.Itoa(int(v)) })
		if err := addLines(p, pl.lines); err != nil {
			return nil, err
		}
		setLogAxis(&p.Y, pl.lines)
		if err := save(p, dir, pl.file, &files); err != nil {
			return nil, err
		}
	}
	if err := plotEfficiency(dir, title, recs, ranks, &files); err != nil {
		return nil, err
	}
	if weak {
		if err := plotIterations(dir, title, recs, &files); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// plotEfficiency plots the four efficiencies against the rank count, with
// the ideal 1.
func plotEfficiency(dir, title string, recs []record, ranks []float64, files *[]string) error {
	eff := func(name string, f func(efficiency) float64) series {
		s := series{name: name}
		for _, r := range recs {
			if v := f(r.eff); !math.IsNaN(v) {
				s.pts = append(s.pts, plotter.XY{X: float64(r.ranks), Y: v})
			}
		}
		return s
	}
	lines := []series{
		eff("Tt", func(e efficiency) float64 { return e.total }),
		eff("Tp", func(e efficiency) float64 { return e.setup }),
		eff("Ts", func(e efficiency) float64 { return e.solve }),
		eff("per iteration", func(e efficiency) float64 { return e.iter }),
	}
	one := series{name: "ideal"}
	for _, x := range ranks {
		one.pts = append(one.pts, plotter.XY{X: x, Y: 1})
	}
	p := newPlot(title, "MPI ranks", "parallel efficiency")
	setTicksAxis(&p.X, ranks, func(v float64) string { return strconv.Itoa(int(v)) })
	if err := addLines(p, append(lines, one)); err != nil {
		return err
	}
	p.Y.Min, p.Y.Max = 0, 1.1
	for _, s := range lines {
		for _, pt := range s.pts {
			p.Y.Max = max(p.Y.Max, 1.05*pt.Y)
		}
	}
	return save(p, dir, "efficiency.png", files)
}

// plotIterations plots the PCG iterations against the global rows n.
func plotIterations(dir, title string, recs []record, files *[]string) error {
	s := series{name: "PCG iterations"}
	var ns []float64
	for _, r := range recs {
		if r.rep != nil && r.rep.N > 0 {
			s.pts = append(s.pts, plotter.XY{X: float64(r.rep.N), Y: float64(r.rep.Iterations)})
			ns = append(ns, float64(r.rep.N))
		}
	}
	p := newPlot(title, "rows n", "PCG iterations")
	setTicksAxis(&p.X, ns, countLabel)
	if err := addLines(p, []series{s}); err != nil {
		return err
	}
	p.Y.Min = 0
	p.Y.Max *= 1.1
	p.Y.Tick.Marker = countTicks{}
	return save(p, dir, "iterations.png", files)
}

// countTicks are gonum's default ticks labelled as whole numbers.
type countTicks struct{}

func (countTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i, t := range ticks {
		if t.Label != "" {
			ticks[i].Label = strconv.FormatFloat(t.Value, 'f', -1, 64)
		}
	}
	return ticks
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	// bottom left: times and efficiencies fall from the top left, sizes and
	// iteration counts rise away from zero, so that corner is free
	p.Legend.Left = true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(8)
	p.Add(plotter.NewGrid())
	return p
}

// addLines draws the series as lines with points; a series named "ideal"
// as a dashed grey line, listed last in the legend. Empty series are left
// out.
func addLines(p *plot.Plot, lines []series) error {
	var args []any
	var ideals []plotter.XYs
	for _, s := range lines {
		switch {
		case len(s.pts) == 0:
		case s.name == "ideal":
			ideals = append(ideals, s.pts)
		default:
			args = append(args, s.name, s.pts)
		}
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	for _, pts := range ideals {
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 128}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("ideal", l)
	}
	return nil
}

// setTicksAxis makes a log axis with a labelled tick at each of the values
// (rank counts, problem sizes), padded a little on both sides.
func setTicksAxis(ax *plot.Axis, values []float64, label func(float64) string) {
	if len(values) == 0 {
		return
	}
	ax.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, v := range values {
		ticks = append(ticks, plot.Tick{Value: v, Label: label(v)})
	}
	ax.Tick.Marker = ticks
	ax.Min, ax.Max = slices.Min(values)/1.25, slices.Max(values)*1.25
}

// setLogAxis makes a log axis that spans the points of the series from the 1-2-5 value
// below their smallest point to the one above their largest, labelled at
// 1, 2 and 5 times powers of ten (only at powers of ten over more than
// three decades).
func setLogAxis(ax *plot.Axis, lines []series) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range lines {
		for _, p := range s.pts {
			lo, hi = min(lo, p.Y), max(hi, p.Y)
		}
	}
	if lo > hi { // no points: an empty plot keeps the default axis
		return
	}
	ax.Scale = plot.LogScale{}
	ticks, tlo, thi := ticks125(lo, hi)
	ax.Tick.Marker = ticks
	ax.Min, ax.Max = tlo, thi
}

// ticks125 returns ticks at the values m*10^e (m = 1, 2, 5) from the
// largest one <= lo to the smallest one >= hi, and those two values.
func ticks125(lo, hi float64) (ticks plot.ConstantTicks, min, max float64) {
	var cand []float64
	for e := math.Floor(math.Log10(lo)) - 1; e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			cand = append(cand, m*math.Pow(10, e))
		}
	}
	i := 0 // the last candidate <= lo
	for i+1 < len(cand) && cand[i+1] <= lo {
		i++
	}
	j := len(cand) - 1 // the first candidate >= hi
	for j > 0 && cand[j-1] >= hi {
		j--
	}
	if i == j { // lo == hi == a candidate: show the values around it
		i, j = i-1, j+1
	}
	sparse := math.Log10(cand[j]/cand[i]) > 3
	for _, v := range cand[i : j+1] {
		t := plot.Tick{Value: v}
		if first := strconv.FormatFloat(v, 'e', 0, 64)[0]; !sparse || first == '1' {
			t.Label = strconv.FormatFloat(v, 'g', 3, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks, cand[i], cand[j]
}

// countLabel writes a count compactly: 8000 as 8k, 1771561 as 1.77M.
func countLabel(v float64) string {
	for _, u := range []struct {
		scale  float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.scale {
			return strconv.FormatFloat(v/u.scale, 'g', 3, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func save(p *plot.Plot, dir, file string, files *[]string) error {
	if err := p.Save(6*vg.Inch, 4*vg.Inch, filepath.Join(dir, file)); err != nil {
		return fmt.Errorf("plot %s: %w", file, err)
	}
	*files = append(*files, file)
	return nil
}
