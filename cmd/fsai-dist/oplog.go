package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/solver"
)

// opTime is one operation kind of -log: its count on rank 0 and its
// seconds over the ranks.
type opTime struct {
	Op    string  `json:"op"`
	Count int     `json:"count"`
	MinS  float64 `json:"min_s"`
	AvgS  float64 `json:"avg_s"`
	MaxS  float64 `json:"max_s"`
}

// opTimes summarizes the ranks' logs: the products with A, the
// preconditioner, the rest of the solve (vector updates and reductions)
// and the whole solve.
func opTimes(c *comm.Comm, log *solver.OpLog) ([]opTime, error) {
	ops := []struct {
		name  string
		count int
		s     float64
	}{
		{"spmv", log.SpMV.Count, log.SpMV.Seconds},
		{"prec", log.Prec.Count, log.Prec.Seconds},
		{"other", 0, log.Solve.Seconds - log.SpMV.Seconds - log.Prec.Seconds},
		{"solve", log.Solve.Count, log.Solve.Seconds},
	}
	n := len(ops)
	lo, hi, sum := make([]float64, n), make([]float64, n), make([]float64, n)
	for i, op := range ops {
		lo[i], hi[i], sum[i] = op.s, op.s, op.s
	}
	for _, r := range []struct {
		op comm.Op
		v  []float64
	}{{comm.Min, lo}, {comm.Max, hi}, {comm.Sum, sum}} {
		if err := comm.Allreduce(c, r.op, r.v); err != nil {
			return nil, err
		}
	}
	out := make([]opTime, n)
	for i, op := range ops {
		out[i] = opTime{Op: op.name, Count: op.count, MinS: lo[i], AvgS: sum[i] / float64(c.Size()), MaxS: hi[i]}
	}
	return out, nil
}

// writeLog writes the -log table: each operation's count and seconds
// (minimum, average and maximum over the ranks) and its share of the
// average solve.
func writeLog(w io.Writer, ops []opTime) error {
	var b strings.Builder
	b.WriteString("fsai-dist log (seconds over the ranks):\n")
	fmt.Fprintf(&b, "  %-6s %7s %10s %10s %10s %6s\n", "op", "count", "min", "avg", "max", "share")
	total := ops[len(ops)-1].AvgS
	for _, op := range ops {
		fmt.Fprintf(&b, "  %-6s %7d %10.3e %10.3e %10.3e %5.1f%%\n", op.Op, op.Count, op.MinS, op.AvgS, op.MaxS, 100*op.AvgS/total)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
