package solver_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/bicgstab"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/gmres"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/solver"
)

// failing is the identity preconditioner until its application number
// after, from which on it returns NaN: a preconditioner that overflows.
type failing struct{ calls, after int }

func (f *failing) Name() string { return "failing" }
func (f *failing) Free()        {}
func (f *failing) Apply(z, r *ddmat.Dense) error {
	f.calls++
	if f.calls >= f.after {
		z.BE.Fill(z.V, math.NaN())
	} else {
		ddmat.Copy(z, r)
	}
	return z.BE.Err()
}

// TestMethodsNaN: a preconditioner that turns to NaN mid-solve ends
// BiCGSTAB and GMRES with reason nan and a detail, and x holds no NaN,
// whichever application fails.
func TestMethodsNaN(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		sys := upwind(c, 12, 5, 2)
		A, err := solver.NewMatrix(c, sys.n, sys.first, sys.rowPtr, sys.cols, sys.vals)
		if err != nil {
			t.Fatal(err)
		}
		s, err := solver.New(A, nil, nonsymOptions("cg", "none"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Free()
		b, x, err := s.Vectors(1)
		if err != nil {
			t.Fatal(err)
		}
		b.BE.Fill(b.V, 1)
		opt := krylov.Options{Tol: 1e-10, MaxIt: 1000}
		for _, method := range []string{"bicgstab", "gmres"} {
			for _, after := range []int{1, 2, 5, 6} {
				var ws solver.Method
				if method == "gmres" {
					ws, err = gmres.NewWorkspace(s.Operator(), b, 4)
				} else {
					ws, err = bicgstab.NewWorkspace(s.Operator(), b)
				}
				if err != nil {
					t.Fatal(err)
				}
				x.BE.Fill(x.V, 0)
				res, err := ws.SolveBlock(&failing{after: after}, b, x, opt)
				ws.Free()
				if err != nil {
					t.Fatal(err)
				}
				if r := res[0]; r.Reason != krylov.NaN || r.Detail == "" {
					t.Errorf("%s, NaN from application %d: %s after %d iterations: %s", method, after, r.Reason, r.Iterations, r.Detail)
				}
				host := make([]float64, x.Rows)
				if err := x.Get(host); err != nil {
					t.Fatal(err)
				}
				for _, v := range host {
					if !krylov.Finite(v) {
						t.Fatalf("%s, NaN from application %d: x holds %v", method, after, v)
					}
				}
			}
		}
	})
}
