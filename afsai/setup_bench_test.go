package afsai

import (
	"flag"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/gentest"
)

var setupProblem = flag.String("setup.problem", "diffusion:100", "problem of BenchmarkSetupStages")

// BenchmarkSetupStages times New on one rank with the default configuration
// on -setup.problem (diffusion:100, 10^6 rows) and reports the seconds of
// each stage of Info: the host stages around the factor computation are
// what the parallel loops speed up; -cpu sets how many cores they get. It
// runs outside mpirun as a singleton rank.
func BenchmarkSetupStages(b *testing.B) {
	A := setupMatrix(b)
	be := cpu.New(0)
	var sum Info
	for b.Loop() {
		p, err := New(A, be, DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		sum.GatherS += p.Info.GatherS
		sum.ComputeS += p.Info.ComputeS
		sum.TransposeS += p.Info.TransposeS
		sum.UploadS += p.Info.UploadS
		p.Free()
	}
	n := float64(b.N)
	b.ReportMetric(sum.GatherS/n, "gather_s")
	b.ReportMetric(sum.ComputeS/n, "compute_s")
	b.ReportMetric(sum.TransposeS/n, "transpose_s")
	b.ReportMetric(sum.UploadS/n, "upload_s")
}

// BenchmarkDiagonalScaling times the set-up's first step on -setup.problem,
// one rank: whether A's diagonal asks for the scaled set-up
// (diagonalScaling, the range of the diagonal and one Allreduce).
func BenchmarkDiagonalScaling(b *testing.B) {
	A := setupMatrix(b)
	for b.Loop() {
		if s, err := diagonalScaling(A); err != nil || s != nil {
			b.Fatalf("diagonalScaling: %d scaling entries, error %v", len(s), err)
		}
	}
}

// BenchmarkMatrixNew times dsmat.New on the stripe of -setup.problem, one
// rank: the split into blocks, which also records the diagonal's range.
func BenchmarkMatrixNew(b *testing.B) {
	c, part, rows := setupRows(b)
	for b.Loop() {
		if _, err := dsmat.New(c, part, rows); err != nil {
			b.Fatal(err)
		}
	}
}

// setupMatrix makes the matrix of -setup.problem on a singleton rank.
func setupMatrix(b *testing.B) *dsmat.Matrix {
	A, err := dsmat.New(setupRows(b))
	if err != nil {
		b.Fatal(err)
	}
	return A
}

// setupRows returns the stripe of -setup.problem on a singleton rank.
func setupRows(b *testing.B) (*comm.Comm, dsmat.Partition, *dsmat.Rows) {
	if err := comm.Init(); err != nil {
		b.Fatal(err)
	}
	c := comm.World()
	_, part, rows := gentest.Stripe(b, c, *setupProblem)
	return c, part, rows
}
