package main

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
)

// column is one column of a CSV table: its header and how a row's cell is
// written. An empty cell means the value is unknown (a run without report).
type column[T any] struct {
	name  string
	value func(*T) string
}

// studyColumns are the columns of scaling.csv, one row per run. total_s is
// the paper's Tt = setup_s + solve_s; wall_s is the report's total_s (the
// whole run, reading or generating the matrix included).
var studyColumns = []column[record]{
	{"ranks", func(r *record) string { return strconv.Itoa(r.ranks) }},
	{"problem", func(r *record) string { return r.problem }},
	{"n", reported(func(p *report) string { return strconv.FormatInt(p.N, 10) })},
	{"nnz", reported(func(p *report) string { return strconv.FormatInt(p.NNZ, 10) })},
	{"backend", reported(func(p *report) string { return p.Backend })},
	{"prec", reported(func(p *report) string { return p.Prec })},
	{"iterations", reported(func(p *report) string { return strconv.Itoa(p.Iterations) })},
	{"setup_s", reported(func(p *report) string { return num(p.SetupS) })},
	{"solve_s", reported(func(p *report) string { return num(p.SolveS) })},
	{"total_s", reported(func(p *report) string { return num(p.tt()) })},
	{"iter_s", reported(func(p *report) string { return num(p.IterS) })},
	{"efficiency", func(r *record) string { return num(r.eff.total) }},
	{"efficiency_setup", func(r *record) string { return num(r.eff.setup) }},
	{"efficiency_solve", func(r *record) string { return num(r.eff.solve) }},
	{"efficiency_iter", func(r *record) string { return num(r.eff.iter) }},
	{"converged", reported(func(p *report) string { return strconv.FormatBool(p.Converged) })},
	{"reason", func(r *record) string { return r.reason }},
	{"status", func(r *record) string { return strconv.Itoa(r.status) }},
	{"relres", reported(func(p *report) string { return num(p.RelRes) })},
	{"device", reported(func(p *report) string { return p.Device })},
	{"read_s", reported(func(p *report) string { return num(p.ReadS) })},
	{"wall_s", reported(func(p *report) string { return num(p.TotalS) })},
	{"halo_device_links", reported(func(p *report) string { return strconv.FormatInt(p.HaloDeviceLinks, 10) })},
	{"halo_host_links", reported(func(p *report) string { return strconv.FormatInt(p.HaloHostLinks, 10) })},
}

// reported makes a cell from the run's report, empty without one.
func reported(f func(*report) string) func(*record) string {
	return func(r *record) string {
		if r.rep == nil {
			return ""
		}
		return f(r.rep)
	}
}

// num writes a float with 6 significant digits (timings are not more
// precise than that); NaN (unknown) as an empty cell.
func num(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// writeCSV writes a header and one row per element of rows to path.
func writeCSV[T any](path string, cols []column[T], rows []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = c.name
	}
	w.Write(cells)
	for i := range rows {
		for j, c := range cols {
			cells[j] = c.value(&rows[i])
		}
		w.Write(cells)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
