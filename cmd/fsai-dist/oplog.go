package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/solver"
)

// opTime is one operation kind of -log: its count on rank 0, its seconds
// over the ranks, and the bytes it moved summed over the ranks with their
// rate over the slowest rank's time (spmv and prec only).
type opTime struct {
	Op    string  `json:"op"`
	Count int     `json:"count"`
	MinS  float64 `json:"min_s"`
	AvgS  float64 `json:"avg_s"`
	MaxS  float64 `json:"max_s"`
	Bytes float64 `json:"bytes"`
	GBs   float64 `json:"gbs,omitempty"`
}

// opTimes summarizes the ranks' logs: the products with A, the
// preconditioner, the rest of the solve (vector updates and reductions)
// and the whole solve.
func opTimes(c *comm.Comm, log *solver.OpLog) ([]opTime, error) {
	ops := []struct {
		name  string
		count int
		s     float64
		bytes int64
	}{
		{"spmv", log.SpMV.Count, log.SpMV.Seconds, log.SpMV.Bytes},
		{"prec", log.Prec.Count, log.Prec.Seconds, log.Prec.Bytes},
		{"other", 0, log.Solve.Seconds - log.SpMV.Seconds - log.Prec.Seconds, 0},
		{"solve", log.Solve.Count, log.Solve.Seconds, 0},
	}
	n := len(ops)
	v := make([]float64, 2*n)
	for i, op := range ops {
		v[i], v[n+i] = op.s, float64(op.bytes)
	}
	lo, avg, hi, err := overRanks(c, v)
	if err != nil {
		return nil, err
	}
	out := make([]opTime, n)
	for i, op := range ops {
		out[i] = opTime{Op: op.name, Count: op.count, MinS: lo[i], AvgS: avg[i], MaxS: hi[i], Bytes: avg[n+i] * float64(c.Size())}
		if out[i].Bytes > 0 && hi[i] > 0 {
			out[i].GBs = out[i].Bytes / hi[i] / 1e9
		}
	}
	return out, nil
}

// overRanks returns the minimum, average and maximum over the ranks of
// each of v's entries. Collective.
func overRanks(c *comm.Comm, v []float64) (lo, avg, hi []float64, err error) {
	lo, hi, avg = slices.Clone(v), slices.Clone(v), slices.Clone(v)
	for _, r := range []struct {
		op comm.Op
		v  []float64
	}{{comm.Min, lo}, {comm.Max, hi}, {comm.Sum, avg}} {
		if err := comm.Allreduce(c, r.op, r.v); err != nil {
			return nil, nil, nil, err
		}
	}
	for i := range avg {
		avg[i] /= float64(c.Size())
	}
	return lo, avg, hi, nil
}

// peakMemory is a kind of memory's peak on each rank: the most it held at
// once during the run, in bytes, over the ranks.
type peakMemory struct {
	Memory   string  `json:"memory"` // "host" or "device"
	MinBytes float64 `json:"min_bytes"`
	AvgBytes float64 `json:"avg_bytes"`
	MaxBytes float64 `json:"max_bytes"`
}

// peaks finds each rank's peak host memory (hostPeak) and its backend's
// peak device memory (backend.MemoryReporter: CUDA's), over the ranks; a
// kind that some rank cannot tell is left out. Collective.
func peaks(c *comm.Comm, be backend.Backend) ([]peakMemory, error) {
	v := []float64{-1, -1}
	if b, ok := hostPeak(); ok {
		v[0] = float64(b)
	}
	if mr, ok := be.(backend.MemoryReporter); ok {
		v[1] = float64(mr.PeakBytes())
	}
	lo, avg, hi, err := overRanks(c, v)
	if err != nil {
		return nil, err
	}
	var out []peakMemory
	for i, kind := range []string{"host", "device"} {
		if lo[i] >= 0 {
			out = append(out, peakMemory{Memory: kind, MinBytes: lo[i], AvgBytes: avg[i], MaxBytes: hi[i]})
		}
	}
	return out, nil
}

// hostPeak is this process's peak resident memory in bytes: VmHWM of
// /proc/self/status, on Linux; false where it cannot be read.
func hostPeak() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "VmHWM:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return 1024 * kb, err == nil
		}
	}
	return 0, false
}

// writeLog writes the -log table: each operation's count and seconds
// (minimum, average and maximum over the ranks), its share of the average
// solve and the rate of the bytes it moved, then the peak memory of the
// ranks.
func writeLog(w io.Writer, ops []opTime, mem []peakMemory) error {
	var b strings.Builder
	b.WriteString("fsai-dist log (seconds over the ranks):\n")
	fmt.Fprintf(&b, "  %-6s %7s %10s %10s %10s %6s %8s\n", "op", "count", "min", "avg", "max", "share", "GB/s")
	total := ops[len(ops)-1].AvgS
	for _, op := range ops {
		rate := "-"
		if op.GBs > 0 {
			rate = fmt.Sprintf("%.2f", op.GBs)
		}
		fmt.Fprintf(&b, "  %-6s %7d %10.3e %10.3e %10.3e %5.1f%% %8s\n", op.Op, op.Count, op.MinS, op.AvgS, op.MaxS, 100*op.AvgS/total, rate)
	}
	if len(mem) > 0 {
		b.WriteString("peak memory per rank (bytes over the ranks):\n")
		fmt.Fprintf(&b, "  %-6s %10s %10s %10s\n", "memory", "min", "avg", "max")
		for _, m := range mem {
			fmt.Fprintf(&b, "  %-6s %10.3e %10.3e %10.3e\n", m.Memory, m.MinBytes, m.AvgBytes, m.MaxBytes)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
