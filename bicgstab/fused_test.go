package bicgstab_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/bicgstab"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/gentest"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/precond"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// Both backends keep BiCGSTAB's fused updates.
var (
	_ bicgstab.Fused = (*cpu.Backend)(nil)
	_ bicgstab.Fused = (*gpu.Backend)(nil)
)

// plain is a backend with only the methods of backend.Backend: no fused
// updates, so BiCGSTAB runs its generic path.
type plain struct{ backend.Backend }

// TestGenericUpdates: on a backend without bicgstab.Fused, BiCGSTAB with
// Jacobi and with none converges on convdiff:10:300 (cell Peclet number
// 14) to the solution it reaches on the fused CPU backend, within 1e-6,
// and its iterations differ by at most one (the two paths differ only in
// rounding), on 1 and 3 ranks.
func TestGenericUpdates(t *testing.T) {
	if _, ok := backend.Backend(plain{cpu.New(1)}).(bicgstab.Fused); ok {
		t.Fatal("the plain backend offers the fused updates")
	}
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, prec := range []string{"jacobi", "none"} {
				fused, xf := solveOn(t, c, cpu.New(1), prec)
				generic, xg := solveOn(t, c, plain{cpu.New(1)}, prec)
				if !fused.Converged || !generic.Converged {
					t.Fatalf("%s: fused %s, generic %s", prec, fused.Reason, generic.Reason)
				}
				if d := fused.Iterations - generic.Iterations; d < -1 || d > 1 {
					t.Errorf("%s: %d iterations fused, %d generic", prec, fused.Iterations, generic.Iterations)
				}
				for i := range xf {
					if math.Abs(xf[i]-xg[i]) > 1e-6 {
						t.Fatalf("%s: x[%d] = %g fused, %g generic", prec, i, xf[i], xg[i])
					}
				}
			}
		})
	}
}

// solveOn solves convdiff:10:300 with b = A*1 from x = 0 on be with prec
// and returns the result and this rank's iterate.
func solveOn(t *testing.T, c *comm.Comm, be backend.Backend, prec string) (krylov.Result, []float64) {
	t.Helper()
	defer be.Close()
	op, _ := gentest.Operator(t, c, be, "convdiff:10:300")
	A := op.Matrix()
	n := A.LocalRows()
	ones, _ := ddmat.NewVector(c, be, n)
	b, _ := ddmat.NewVector(c, be, n)
	x, _ := ddmat.NewVector(c, be, n)
	for _, v := range []*ddmat.Dense{ones, b, x} {
		defer v.Free()
	}
	be.Fill(ones.V, 1)
	if err := op.ApplyBlock(b.V, ones.V, 1); err != nil {
		t.Fatal(err)
	}
	var M krylov.Preconditioner = precond.None{}
	if prec == "jacobi" {
		j, err := precond.NewJacobi(A, be)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Free()
		M = j
	}
	ws, err := bicgstab.NewWorkspace(op, b)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Free()
	res, err := ws.SolveBlock(M, b, x, krylov.Options{Tol: 1e-10, MaxIt: 1000})
	if err != nil {
		t.Fatal(err)
	}
	host := make([]float64, n)
	if err := x.Get(host); err != nil {
		t.Fatal(err)
	}
	return res[0], host
}
