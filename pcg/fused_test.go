package pcg_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// Both backends keep PCG's and single-reduction CG's fused updates, and
// the distributed operator adds its dots to their sums.
var (
	_ pcg.Fused       = (*cpu.Backend)(nil)
	_ pcg.Fused       = (*gpu.Backend)(nil)
	_ pcg.SingleFused = (*cpu.Backend)(nil)
	_ pcg.SingleFused = (*gpu.Backend)(nil)
	_ pcg.SumOperator = (*dsmat.Operator)(nil)
)

// plain is a backend with only the methods of backend.Backend: no fused
// updates, so PCG runs its generic path.
type plain struct{ backend.Backend }

// TestGenericUpdates: on a backend without pcg.Fused, PCG with Jacobi, with
// none and with a block of right-hand sides converges to the same
// solution as on the fused CPU backend, in the same number of iterations
// (the two paths differ only in rounding), on 1 and 3 ranks.
func TestGenericUpdates(t *testing.T) {
	if _, ok := backend.Backend(plain{cpu.New(1)}).(pcg.Fused); ok {
		t.Fatal("the plain backend offers the fused updates")
	}
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, prec := range []string{"jacobi", "none"} {
				for _, k := range []int{1, 2} {
					fused := solveOn(t, c, cpu.New(1), prec, k, pcg.NewWorkspace)
					generic := solveOn(t, c, plain{cpu.New(1)}, prec, k, pcg.NewWorkspace)
					for col := range k {
						f, g := fused.res[col], generic.res[col]
						if !g.Converged || g.RelRes > 1e-8 {
							t.Fatalf("%s, %d columns, column %d: generic path: reason %s, relres %.3g", prec, k, col, g.Reason, g.RelRes)
						}
						if f.Iterations != g.Iterations {
							t.Errorf("%s, %d columns, column %d: %d iterations fused, %d generic", prec, k, col, f.Iterations, g.Iterations)
						}
					}
					for i := range fused.x {
						if math.Abs(fused.x[i]-generic.x[i]) > 1e-6 {
							t.Fatalf("%s, %d columns: x[%d] = %g fused, %g generic", prec, k, i, fused.x[i], generic.x[i])
						}
					}
				}
			}
		})
	}
}

// newWorkspace is pcg.NewWorkspace or pcg.NewSingleReductionWorkspace.
type newWorkspace func(krylov.Operator, *ddmat.Dense) (*pcg.Workspace, error)

type blockSolve struct {
	res []pcg.Result
	x   []float64
}

// solveOn solves poisson7:8 on be with prec for k right-hand sides
// (blockRHS) in a workspace of newWS (PCG's or single-reduction CG's) and
// returns the results and this rank's iterate.
func solveOn(t *testing.T, c *comm.Comm, be backend.Backend, prec string, k int, newWS newWorkspace) blockSolve {
	t.Helper()
	return solveSystem(t, setupOn(t, c, be, "poisson7:8", 1), prec, k, newWS, pcg.Options{Tol: 1e-8, MaxIt: 2000})
}

// solveSystem solves sys with prec for k right-hand sides (blockRHS) in a
// workspace of newWS with opt, and returns the results and this rank's
// iterate.
func solveSystem(t *testing.T, sys *system, prec string, k int, newWS newWorkspace, opt pcg.Options) blockSolve {
	t.Helper()
	c, be := sys.A.Comm, sys.b.BE
	M, err := newPrec(sys, prec)
	if err != nil {
		t.Fatal(err)
	}
	defer M.Free()
	n := sys.A.LocalRows()
	b, _ := ddmat.New(c, be, n, k)
	x, _ := ddmat.New(c, be, n, k)
	defer b.Free()
	defer x.Free()
	if err := b.Set(blockRHS(t, sys, k, -1, -1)); err != nil {
		t.Fatal(err)
	}
	res := solveWith(t, newWS, sys.op, M, b, x, opt)
	host := make([]float64, x.Rows*x.Cols)
	if err := x.Get(host); err != nil {
		t.Fatal(err)
	}
	return blockSolve{res, host}
}

// solveWith is SolveBlock in a workspace of newWS, failing the test on an
// error.
func solveWith(t *testing.T, newWS newWorkspace, A krylov.Operator, M pcg.Preconditioner, b, x *ddmat.Dense, opt pcg.Options) []pcg.Result {
	t.Helper()
	ws, err := newWS(A, b)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Free()
	res, err := ws.SolveBlock(M, b, x, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
