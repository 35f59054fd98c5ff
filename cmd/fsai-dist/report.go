package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/atomicfile"
	"github.com/fsai-dist/fsai-dist/solver"
)

// report is the JSON summary of a run (-report). Its fields are a contract
// with scripts and users: extend it, never rename or drop a field.
type report struct {
	Converged  bool   `json:"converged"`
	Reason     string `json:"reason"`
	Detail     string `json:"detail,omitempty"`
	Iterations int    `json:"iterations"`
	RelRes     number `json:"relres"` // true ||b - A x||/||b||
	// the estimate the iteration ended with (the recurrence's, or the true
	// residual a replacement put in its place) and the number of residual
	// replacements (docs/convergence.md)
	RecurrenceRelRes number `json:"recurrence_relres"`
	Replacements     int    `json:"replacements"`
	N                int64  `json:"n"`
	NNZ              int64  `json:"nnz"` // both triangles
	Ranks            int    `json:"ranks"`
	Backend          string `json:"backend"`
	Device           string `json:"device"`
	// the Krylov method (-solver) and, for gmres, its restart length; for
	// cg, whether it ran single-reduction CG (-pcg.single-reduction)
	Solver          string `json:"solver"`
	GMRESRestart    int    `json:"gmres_restart,omitempty"`
	SingleReduction bool   `json:"single_reduction,omitempty"`
	Prec            string `json:"prec"`
	Matrix          string `json:"matrix,omitempty"`
	Problem         string `json:"problem,omitempty"`
	Partition       string `json:"partition"`
	// MatrixValues is how A's values are stored: "double", or "single"
	// when every block holds float32 numbers only (exact, -matrix.narrow).
	MatrixValues string  `json:"matrix_values"`
	Tol          float64 `json:"tol"`
	MaxIt        int     `json:"maxit"`
	ReadS        float64 `json:"read_s"`
	// InputS is read_s's part spent reading or generating the matrix and
	// assembling the rank's rows (slowest rank), without the start-up and
	// the checks before and after it
	InputS float64 `json:"input_s"`
	SetupS float64 `json:"setup_s"`
	// setup_s in two parts: A bound to the backend (its blocks uploaded,
	// the halo links made) with b and x, which every preconditioner needs,
	// and the preconditioner's own set-up
	BindS      float64  `json:"bind_s"`
	PrecSetupS float64  `json:"prec_setup_s"`
	SolveS     float64  `json:"solve_s"`
	TotalS     float64  `json:"total_s"`
	IterS      float64  `json:"iter_s"` // solve_s per iteration
	History    []number `json:"history"`
	// -bench-spmv only: seconds per SpMV with A (slowest rank) and the
	// bandwidth of the bytes a CSR SpMV must move
	SpMVS   float64 `json:"spmv_s,omitempty"`
	SpMVGBs float64 `json:"spmv_gbs,omitempty"`
	// the host's share of spmv_s: the time to queue one product (slowest
	// rank); near spmv_s, the host and not the device sets the pace
	SpMVHostS float64 `json:"spmv_host_s,omitempty"`
	// with several ranks: the SpMV without overlap (halos first) and without
	// communication, and the share of the exchange the overlap hides:
	// (sequential - overlapped) / (sequential - local)
	SpMVSequentialS float64 `json:"spmv_sequential_s,omitempty"`
	SpMVLocalS      float64 `json:"spmv_local_s,omitempty"`
	HaloHidden      float64 `json:"halo_hidden,omitempty"`
	// the halo exchanges of A's SpMV (one per rank and neighbour it
	// receives from or sends to, summed over ranks) that go device to
	// device (GPUs of one node, CUDA IPC) and through the host
	HaloDeviceLinks int64 `json:"halo_device_links"`
	HaloHostLinks   int64 `json:"halo_host_links"`
	// FSAI and SPAI preconditioners only: nonzeros of G (of M for spai),
	// nnz(G)/nnz(A), and the set-up's figures (a *solver.FSAIInfo, or a
	// *solver.SPAIInfo for spai)
	PrecNNZ     int64   `json:"prec_nnz,omitempty"`
	PrecDensity float64 `json:"prec_density,omitempty"`
	PrecInfo    any     `json:"prec_info,omitempty"`
	// with a coarse space (-coarse): its boxes along each axis, coarse
	// unknowns, modes dropped as dependent and set-up seconds (part of
	// prec_setup_s)
	Coarse *solver.CoarseInfo `json:"coarse,omitempty"`
	// the number of right-hand sides; with more than one, each one's
	// outcome (the fields above are then the worst column's)
	NRHS    int      `json:"nrhs"`
	Columns []column `json:"columns,omitempty"`
	// what reproduces the run: the values of the preconditioner's flags
	// (-afsai.* and -fsai.* for FSAI, -spai.* for SPAI; set or default),
	// the program's
	// version (see version) and its command line, program name first
	PrecParams map[string]string `json:"prec_params,omitempty"`
	// every solver option's value, by name (solver.OptionTable), as the
	// defaults, -options, FSAI_OPTIONS and the flags resolved it
	Options map[string]string `json:"options"`
	// -log only: each operation's count (rank 0) and seconds over the
	// ranks: spmv, prec, other (vector updates and reductions), solve
	Log []opTime `json:"log,omitempty"`
	// the most memory a rank held at once during the run, in bytes, on the
	// rank that held the most: its resident host memory (VmHWM; Linux
	// only) and the device memory of its backend's allocations (CUDA only)
	PeakHostBytes   float64 `json:"peak_host_bytes,omitempty"`
	PeakDeviceBytes float64 `json:"peak_device_bytes,omitempty"`
	// -log only: those peaks' minimum, average and maximum over the ranks
	LogMemory   []peakMemory `json:"log_memory,omitempty"`
	Version     string       `json:"version"`
	CommandLine []string     `json:"command_line"`
}

// setPeaks sets the report's peak memory from the ranks' peaks.
func (r *report) setPeaks(mem []peakMemory) {
	for _, m := range mem {
		switch m.Memory {
		case "host":
			r.PeakHostBytes = m.MaxBytes
		case "device":
			r.PeakDeviceBytes = m.MaxBytes
		}
	}
}

// newReport starts the report of a run with what is known before it.
func newReport(c *comm.Comm, o *options) *report {
	r := &report{Ranks: c.Size(), Solver: o.solver.Method, Prec: o.solver.Prec, Tol: o.solver.Tol, MaxIt: o.solver.MaxIt, Partition: o.partition,
		Version: version(), CommandLine: os.Args, Options: optionValues(o.solver, "")}
	switch o.solver.Prec {
	case "afsai", "fsai":
		r.PrecParams = optionValues(o.solver, "afsai.", "fsai.")
	case "spai":
		r.PrecParams = optionValues(o.solver, "spai.")
	}
	switch o.solver.Method {
	case "gmres":
		r.GMRESRestart = o.solver.GMRESRestart
	case "cg":
		r.SingleReduction = o.solver.CGSingleReduction
	}
	return r
}

// version is the module's version ("devel" for a build from a checkout)
// and, where the build recorded it, the commit it was built from, with
// "+modified" for uncommitted changes: "devel commit 97c4b11...".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var commit, modified string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			commit = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			modified = "+modified"
		}
	}
	if commit != "" {
		v += " commit " + commit + modified
	}
	return v
}

// column is one right-hand side's outcome, in reports of several.
type column struct {
	Converged        bool   `json:"converged"`
	Reason           string `json:"reason"`
	Detail           string `json:"detail,omitempty"`
	Iterations       int    `json:"iterations"`
	RelRes           number `json:"relres"`
	RecurrenceRelRes number `json:"recurrence_relres"`
	Replacements     int    `json:"replacements"`
}

// fill records the solve of one or several right-hand sides. With several,
// the top-level fields are the worst column's (the first that did not
// converge, else the one that took the most iterations), so that converged
// means all converged, and columns lists each.
func (r *report) fill(res []solver.Result) {
	r.NRHS = len(res)
	worst := 0
	for k, c := range res {
		if !res[worst].Converged {
			break
		}
		if !c.Converged || c.Iterations > res[worst].Iterations {
			worst = k
		}
	}
	if len(res) > 1 {
		r.Columns = make([]column, len(res))
		for k, c := range res {
			r.Columns[k] = column{c.Converged, string(c.Reason), c.Detail, c.Iterations, number(c.RelRes),
				number(c.RecurrenceRelRes), c.Replacements}
		}
	}
	r.fillOne(res[worst])
}

func (r *report) fillOne(res solver.Result) {
	r.Converged, r.Reason, r.Detail = res.Converged, string(res.Reason), res.Detail
	r.Iterations, r.RelRes = res.Iterations, number(res.RelRes)
	r.RecurrenceRelRes, r.Replacements = number(res.RecurrenceRelRes), res.Replacements
	r.History = make([]number, len(res.History))
	for i, v := range res.History {
		r.History[i] = number(v)
	}
	if res.Iterations > 0 {
		r.IterS = r.SolveS / float64(res.Iterations)
	}
}

// number is a float64 that encodes NaN and infinities, which JSON lacks, as
// null: a solve that ends in NaN still gets its report.
type number float64

func (x number) MarshalJSON() ([]byte, error) {
	if f := float64(x); !math.IsNaN(f) && !math.IsInf(f, 0) {
		return json.Marshal(f)
	}
	return []byte("null"), nil
}

// write stores the report atomically: a temporary file in the same
// directory, renamed over path once complete.
func (r *report) write(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return atomicfile.Write(path, append(data, '\n'))
}
