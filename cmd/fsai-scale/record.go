package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// report is the part of fsai-dist's JSON report (README, "Report fields")
// that the studies use.
type report struct {
	Converged  bool    `json:"converged"`
	Reason     string  `json:"reason"`
	Detail     string  `json:"detail"`
	Iterations int     `json:"iterations"`
	RelRes     float64 `json:"relres"`
	N          int64   `json:"n"`
	NNZ        int64   `json:"nnz"`
	Backend    string  `json:"backend"`
	Device     string  `json:"device"`
	Prec       string  `json:"prec"`
	ReadS      float64 `json:"read_s"`
	SetupS     float64 `json:"setup_s"`
	SolveS     float64 `json:"solve_s"`
	TotalS     float64 `json:"total_s"` // the whole run, reading the matrix included
	IterS      float64 `json:"iter_s"`
	// how A's halos travelled: links device to device, through the host
	HaloDeviceLinks int64 `json:"halo_device_links"`
	HaloHostLinks   int64 `json:"halo_host_links"`
}

// tt is the paper's total time Tt = Tp + Ts: set-up and solve, without
// reading or generating the matrix.
func (r *report) tt() float64 { return r.SetupS + r.SolveS }

// record is one run of fsai-dist in a study.
type record struct {
	ranks   int
	problem string  // the -problem spec, or the -matrix path
	status  int     // exit status: fsai-dist's 0, 1, 2, 3; -1 when it did not run to its end
	reason  string  // the report's reason, or why there is no report
	rep     *report // nil when the run left no report
	eff     efficiency
}

// ok says whether the run converged and reported.
func (r *record) ok() bool { return r.status == 0 && r.rep != nil && r.rep.Converged }

func readReport(path string) (*report, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no report written")
	}
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	return &r, nil
}

// summary is the line a study prints for a run.
func (r *record) summary() string {
	if r.rep == nil {
		return fmt.Sprintf("%d ranks, %s: FAILED (%s)", r.ranks, r.problem, r.reason)
	}
	return fmt.Sprintf("%d ranks, %s: %s, n %d, %d iterations, Tp %.3g s, Ts %.3g s, %.3g ms/iteration",
		r.ranks, r.problem, r.reason, r.rep.N, r.rep.Iterations, r.rep.SetupS, r.rep.SolveS, 1e3*r.rep.IterS)
}
