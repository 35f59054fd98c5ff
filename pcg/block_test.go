package pcg_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// blockRHS returns this rank's rows of k right-hand sides (row-major) of
// sys: column c is A*v_c for a different smooth v_c; column zero, when in
// range, is all zeros; column scaled is 1e3 times column 0.
func blockRHS(t *testing.T, sys *system, k, zero, scaled int) []float64 {
	t.Helper()
	n := sys.A.LocalRows()
	be := sys.b.BE
	v, _ := ddmat.NewVector(sys.A.Comm, be, n)
	av, _ := ddmat.NewVector(sys.A.Comm, be, n)
	defer v.Free()
	defer av.Free()
	out := make([]float64, n*k)
	host := make([]float64, n)
	for c := range k {
		for i := range host {
			g := float64(sys.A.First() + int64(i))
			host[i] = math.Sin(0.37*g*float64(c+1)) + 0.1*float64(c)
		}
		if err := v.Set(host); err != nil {
			t.Fatal(err)
		}
		if err := sys.op.Apply(av.V, v.V); err != nil {
			t.Fatal(err)
		}
		if err := av.Get(host); err != nil {
			t.Fatal(err)
		}
		for i, h := range host {
			switch c {
			case zero:
				h = 0
			case scaled:
				h = 1e3 * out[i*k]
			}
			out[i*k+c] = h
		}
	}
	return out
}

// column returns column c of a row-major block of k columns.
func column(block []float64, k, c int) []float64 {
	out := make([]float64, len(block)/k)
	for i := range out {
		out[i] = block[i*k+c]
	}
	return out
}

// TestSolveBlockMatchesColumns solves four right-hand sides at once and each
// alone: every column takes its own solve's iterations (within one: the
// block kernels may sum in another order) and reaches the same solution; a
// zero column gets x = 0 in no iterations. PCG and single-reduction CG
// alike.
func TestSolveBlockMatchesColumns(t *testing.T) {
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, newWS := range workspaces {
				blockMatchesColumns(t, c, newWS)
			}
		})
	}
}

// workspaces are PCG's and single-reduction CG's constructors.
var workspaces = []newWorkspace{pcg.NewWorkspace, pcg.NewSingleReductionWorkspace}

// blockMatchesColumns is TestSolveBlockMatchesColumns in workspaces of
// newWS.
func blockMatchesColumns(t *testing.T, c *comm.Comm, newWS newWorkspace) {
	sys := setup(t, c, "poisson7:8", 1)
	be, n := sys.b.BE, sys.A.LocalRows()
	jac, err := pcg.NewJacobi(sys.A, be)
	if err != nil {
		t.Fatal(err)
	}
	const k = 4
	rhs := blockRHS(t, sys, k, 2, 3)
	opt := pcg.Options{Tol: 1e-10, MaxIt: 500}
	for _, M := range []pcg.Preconditioner{pcg.None{}, jac} {
		b, _ := ddmat.New(c, be, n, k)
		x, _ := ddmat.New(c, be, n, k)
		if err := b.Set(rhs); err != nil {
			t.Fatal(err)
		}
		res := solveWith(t, newWS, sys.op, M, b, x, opt)
		xs := make([]float64, n*k)
		if err := x.Get(xs); err != nil {
			t.Fatal(err)
		}
		for col := range k {
			if err := sys.b.Set(column(rhs, k, col)); err != nil {
				t.Fatal(err)
			}
			be.Fill(sys.x.V, 0)
			one := solveWith(t, newWS, sys.op, M, sys.b, sys.x, opt)[0]
			x1 := make([]float64, n)
			if err := sys.x.Get(x1); err != nil {
				t.Fatal(err)
			}
			got := res[col]
			if !got.Converged || got.RelRes > 1e-9 {
				t.Errorf("%s column %d: %s after %d iterations, relres %.3g", M.Name(), col, got.Reason, got.Iterations, got.RelRes)
			}
			if d := got.Iterations - one.Iterations; d < -1 || d > 1 {
				t.Errorf("%s column %d: %d iterations in the block, %d alone", M.Name(), col, got.Iterations, one.Iterations)
			}
			if col == 2 && got.Iterations != 0 {
				t.Errorf("%s zero column: %d iterations", M.Name(), got.Iterations)
			}
			scale := 1.0
			if col == 3 {
				scale = 1e3
			}
			for i, v := range column(xs, k, col) {
				if math.Abs(v-x1[i]) > 1e-7*scale {
					t.Fatalf("%s column %d row %d: %v in the block, %v alone", M.Name(), col, i, v, x1[i])
				}
			}
		}
		b.Free()
		x.Free()
	}
}

// TestSolveBlockFailingColumn gives one column a NaN right-hand side: that
// column stops with reason nan and keeps its initial guess; the others
// converge as if it were not there. PCG and single-reduction CG alike.
func TestSolveBlockFailingColumn(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		for _, newWS := range workspaces {
			blockFailingColumn(t, c, newWS)
		}
	})
}

// blockFailingColumn is TestSolveBlockFailingColumn in a workspace of
// newWS.
func blockFailingColumn(t *testing.T, c *comm.Comm, newWS newWorkspace) {
	sys := setup(t, c, "poisson7:6", 1)
	be, n := sys.b.BE, sys.A.LocalRows()
	const k = 3
	rhs := blockRHS(t, sys, k, -1, -1)
	if c.Rank() == 0 {
		rhs[1] = math.NaN() // row 0, column 1
	}
	b, _ := ddmat.New(c, be, n, k)
	x, _ := ddmat.New(c, be, n, k)
	if err := b.Set(rhs); err != nil {
		t.Fatal(err)
	}
	guess := make([]float64, n*k)
	for i := range guess {
		guess[i] = 0.5
	}
	if err := x.Set(guess); err != nil {
		t.Fatal(err)
	}
	res := solveWith(t, newWS, sys.op, pcg.None{}, b, x, pcg.Options{Tol: 1e-10, MaxIt: 500})
	if res[1].Reason != pcg.NaN {
		t.Errorf("NaN column: reason %s, want nan", res[1].Reason)
	}
	for _, col := range []int{0, 2} {
		if !res[col].Converged || res[col].RelRes > 1e-9 {
			t.Errorf("column %d: %s, relres %.3g", col, res[col].Reason, res[col].RelRes)
		}
	}
	xs := make([]float64, n*k)
	if err := x.Get(xs); err != nil {
		t.Fatal(err)
	}
	for i, v := range column(xs, k, 1) {
		if v != 0.5 {
			t.Fatalf("NaN column row %d: x = %v, want the initial guess 0.5", i, v)
		}
	}
}
