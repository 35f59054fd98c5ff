package solver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/gentest"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/solver"
)

// rowsMatrix is poisson7:n as the command line holds it: stripes of the
// default partition, made into a Matrix by NewMatrixRows.
func rowsMatrix(t *testing.T, c *comm.Comm, spec string) *solver.Matrix {
	t.Helper()
	_, part, rows := gentest.Stripe(t, c, spec)
	A, err := solver.NewMatrixRows(c, part, rows)
	if err != nil {
		t.Fatal(err)
	}
	return A
}

// TestStages: Bind, Vectors, SetUp and SolveVectors, the path of the
// command line, give every preconditioner of the registry the same
// iterations and the same residual history, bit for bit, as New and
// SolveMany, for one and for three right-hand sides, on 1 and 3 ranks; a
// preconditioner that is not symmetric (spai) with GMRES, for one.
func TestStages(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			A := rowsMatrix(t, c, "poisson7:8")
			n := A.LocalRows()
			for _, prec := range solver.Precs {
				opt := solver.DefaultOptions()
				opt.Prec, opt.Backend, opt.Threads = prec, "cpu", 1
				ks := []int{1, 3}
				if !solver.PrecSymmetric(prec) {
					opt.Method, ks = "gmres", ks[:1]
				}
				whole, err := solver.New(A, nil, opt)
				if err != nil {
					t.Fatal(err)
				}
				staged, err := solver.Bind(A, nil, opt)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range ks {
					rhs := make([]float64, n*k) // column c: all c+1, in turn and row-major alike
					for i := range rhs {
						rhs[i] = float64(i/n + 1)
					}
					want, err := whole.SolveMany(rhs, make([]float64, n*k), k)
					if err != nil {
						t.Fatal(err)
					}
					b, x, err := staged.Vectors(k)
					if err != nil {
						t.Fatal(err)
					}
					for i := range rhs {
						rhs[i] = float64(i%k + 1)
					}
					if err := b.Set(rhs); err != nil {
						t.Fatal(err)
					}
					b.BE.Fill(x.V, 0)
					if k == 1 {
						if err := staged.SetUp(); err != nil {
							t.Fatal(err)
						}
					}
					got, err := staged.SolveVectors(k)
					if err != nil {
						t.Fatal(err)
					}
					for col := range k {
						if got[col].Iterations != want[col].Iterations || !slices.Equal(got[col].History, want[col].History) {
							t.Errorf("%s, %d columns, column %d: %d iterations staged, %d by SolveMany (histories differ)",
								prec, k, col, got[col].Iterations, want[col].Iterations)
						}
					}
				}
				whole.Free()
				staged.Free()
			}
		})
	}
}

// TestOptionHooks: Stop ends the solve with reason interrupted after the
// iteration it asked in, Progress sees every iteration, a matrix of
// NewMatrixRows refuses new values, the staged calls refuse to run out of
// order, and the registries refuse unknown names by listing theirs.
func TestOptionHooks(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		A := rowsMatrix(t, c, "poisson7:8")
		opt := solver.DefaultOptions()
		opt.Prec, opt.Backend, opt.Threads = "none", "cpu", 1
		var seen []int
		opt.Progress = func(it int, _ float64) { seen = append(seen, it) }
		opt.Stop = func() bool { return len(seen) == 3 } // asked during iteration 4
		s, err := solver.New(A, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Free()
		b := make([]float64, A.LocalRows())
		for i := range b {
			b[i] = 1
		}
		res, err := s.Solve(b, make([]float64, len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Reason != krylov.Interrupted || res.Iterations != 4 || !slices.Equal(seen, []int{1, 2, 3, 4}) {
			t.Errorf("reason %s after %d iterations, progress at %v; want interrupted after 4", res.Reason, res.Iterations, seen)
		}
		if err := s.SetValues(make([]float64, A.LocalNNZ())); err == nil || !strings.Contains(err.Error(), "NewMatrixRows") {
			t.Errorf("SetValues on a matrix of NewMatrixRows: %v", err)
		}
		staged, err := solver.Bind(A, nil, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer staged.Free()
		if _, err := staged.Solve(b, make([]float64, len(b))); err == nil || !strings.Contains(err.Error(), "Bind needs SetUp") {
			t.Errorf("Solve before SetUp: %v", err)
		}
		if _, err := staged.SolveVectors(2); err == nil {
			t.Error("SolveVectors of 2 columns without their Vectors: no error")
		}
		if err := staged.Rebuild(); err != nil { // sets the preconditioner up
			t.Fatal(err)
		}
		if err := staged.SetUp(); err == nil {
			t.Error("a second SetUp: no error")
		}
		if res, err := staged.Solve(b, make([]float64, len(b))); err != nil || !res.Converged {
			t.Errorf("after Rebuild: %s, %v", res.Reason, err)
		}
		for _, bad := range []solver.Options{{Method: "minres"}, {Prec: "ilu"}, {Method: "gmres", GMRESRestart: -1}, {Backend: "opencl"}, {Stagnation: -1}} {
			if s, err := solver.New(A, nil, bad); err == nil {
				s.Free()
				t.Errorf("%+v accepted", bad)
			}
		}
		_, err = solver.New(A, nil, solver.Options{Method: "minres"})
		if want := `solver: method "minres" is not one of [bicgstab cg gmres]`; err == nil || err.Error() != want {
			t.Errorf("unknown method: %v, want %s", err, want)
		}
	})
}
