package pcg_test

import (
	"math"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// TestSingleReductionMatchesPCG: single-reduction CG with none, Jacobi and
// aFSAI, on one right-hand side and on a block of three, on 1 to 4 ranks,
// converges (true residual) to PCG's solution within the tolerance, in
// PCG's iterations within 3; on a backend without the fused steps (plain)
// it takes the fused path's iterations within 1.
func TestSingleReductionMatchesPCG(t *testing.T) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, prec := range []string{"none", "jacobi", "afsai"} {
				for _, k := range []int{1, 3} {
					want := solveOn(t, c, cpu.New(1), prec, k, pcg.NewWorkspace)
					got := solveOn(t, c, cpu.New(1), prec, k, pcg.NewSingleReductionWorkspace)
					compareSolves(t, prec, k, want, got, 3)
					if np == 1 || np == 3 {
						generic := solveOn(t, c, plain{cpu.New(1)}, prec, k, pcg.NewSingleReductionWorkspace)
						compareSolves(t, prec+" generic", k, got, generic, 1)
					}
				}
			}
		})
	}
}

// compareSolves fails unless every column of got converged and took want's
// iterations within slack, and got's iterate is want's within 1e-6 (the
// solution's entries are of order one, the tolerance 1e-8).
func compareSolves(t *testing.T, what string, k int, want, got blockSolve, slack int) {
	t.Helper()
	for col := range k {
		w, g := want.res[col], got.res[col]
		if !g.Converged || g.RelRes > 1e-8 {
			t.Fatalf("%s, %d columns, column %d: reason %s, relres %.3g", what, k, col, g.Reason, g.RelRes)
		}
		if d := g.Iterations - w.Iterations; d < -slack || d > slack {
			t.Errorf("%s, %d columns, column %d: %d iterations, want %d within %d", what, k, col, g.Iterations, w.Iterations, slack)
		}
	}
	for i := range want.x {
		if math.Abs(want.x[i]-got.x[i]) > 1e-6 {
			t.Fatalf("%s, %d columns: x[%d] = %g, want %g", what, k, i, got.x[i], want.x[i])
		}
	}
}

// waiting is the CPU backend with a count of the calls that wait for the
// device on a GPU backend (those that return data to the host).
type waiting struct {
	*cpu.Backend
	waits *int
}

func (w waiting) TakeSum(s backend.Sum, out []float64) error {
	*w.waits++
	return w.Backend.TakeSum(s, out)
}

func (w waiting) Sync() error {
	*w.waits++
	return w.Backend.Sync()
}

func (w waiting) Download(dst []float64, src backend.Vector) error {
	*w.waits++
	return w.Backend.Download(dst, src)
}

func (w waiting) DotCols(x, y backend.Vector, out []float64) {
	*w.waits++
	w.Backend.DotCols(x, y, out)
}

func (w waiting) DotPairCols(x, y, z backend.Vector, xy, xz []float64) {
	*w.waits++
	w.Backend.DotPairCols(x, y, z, xy, xz)
}

func (w waiting) UpdateRZCols(r backend.Vector, a []float64, q, d backend.Vector, rr, rz []float64) {
	*w.waits++
	w.Backend.UpdateRZCols(r, a, q, d, rr, rz)
}

// TestSingleReductionWaits: between the Progress calls of consecutive
// iterations, single-reduction CG waits for the device once (its one
// TakeSum, read for its one Allreduce) with Jacobi and with aFSAI, on one
// column and on two, on 1 and 2 ranks; PCG waits twice. The count is of
// the calls that wait on a GPU backend, made on a CPU backend that counts
// them.
func TestSingleReductionWaits(t *testing.T) {
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, prec := range []string{"jacobi", "afsai"} {
				for _, k := range []int{1, 2} {
					if got := waitsPerIteration(t, c, prec, k, pcg.NewSingleReductionWorkspace); got != 1 {
						t.Errorf("single reduction, %s, %d columns: %d waits per iteration, want 1", prec, k, got)
					}
					if got := waitsPerIteration(t, c, prec, k, pcg.NewWorkspace); got != 2 {
						t.Errorf("PCG, %s, %d columns: %d waits per iteration, want 2", prec, k, got)
					}
				}
			}
		})
	}
}

// waitsPerIteration solves poisson7:8 with prec for k columns on a
// counting backend and returns the waits between Progress calls, the same
// for every iteration (else it fails).
func waitsPerIteration(t *testing.T, c *comm.Comm, prec string, k int, newWS newWorkspace) int {
	t.Helper()
	waits := 0
	sys := setupOn(t, c, waiting{cpu.New(1), &waits}, "poisson7:8", 1)
	var per []int
	last := -1
	opt := pcg.Options{Tol: 1e-8, MaxIt: 2000, Progress: func(int, float64) {
		if last >= 0 {
			per = append(per, waits-last)
		}
		last = waits
	}}
	res := solveSystem(t, sys, prec, k, newWS, opt).res
	// the last iterations confirm the true residual: those before count
	if len(per) < 10 || !res[0].Converged {
		t.Fatalf("%s, %d columns: %d iterations (%s)", prec, k, len(per)+1, res[0].Reason)
	}
	per = per[:len(per)-3]
	for i, p := range per {
		if p != per[0] {
			t.Fatalf("%s, %d columns: %d waits in iteration %d, %d in iteration 2", prec, k, p, i+2, per[0])
		}
	}
	return per[0]
}

// nanPrec is a preconditioner whose output holds NaN.
type nanPrec struct{}

func (nanPrec) Name() string { return "nan" }
func (nanPrec) Free()        {}
func (nanPrec) Apply(z, r *ddmat.Dense) error {
	z.BE.Fill(z.V, math.NaN())
	return z.BE.Err()
}

// TestSingleReductionStops: single-reduction CG stops as PCG does: at the
// first p'Ap of a negative definite matrix (breakdown), on a
// preconditioner that yields NaN (nan, at r'z), at the iteration limit, at
// once on b = 0 (converged, x = 0) and on a NaN right-hand side (nan), on
// 2 ranks.
func TestSingleReductionStops(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		solve := func(sys *system, M pcg.Preconditioner, maxit int) pcg.Result {
			ws, err := pcg.NewSingleReductionWorkspace(sys.op, sys.b)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Free()
			res, err := ws.Solve(M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: maxit})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		res := solve(setup(t, c, "poisson7:6", -1), pcg.None{}, 100)
		if res.Converged || res.Reason != pcg.Breakdown || !strings.Contains(res.Detail, "p'Ap") {
			t.Errorf("negative definite: reason %q detail %q", res.Reason, res.Detail)
		}
		res = solve(setup(t, c, "poisson7:6", 1), nanPrec{}, 100)
		if res.Converged || res.Reason != pcg.NaN || !strings.Contains(res.Detail, "r'z") {
			t.Errorf("NaN preconditioner: reason %q detail %q", res.Reason, res.Detail)
		}
		res = solve(setup(t, c, "poisson7:8", 1), pcg.None{}, 3)
		if res.Converged || res.Reason != pcg.MaxIterations || res.Iterations != 3 {
			t.Errorf("maxit 3: converged %v reason %q after %d", res.Converged, res.Reason, res.Iterations)
		}
		sys := setup(t, c, "poisson7:6", 1)
		sys.b.BE.Fill(sys.b.V, 0)
		sys.b.BE.Fill(sys.x.V, 1)
		if res = solve(sys, pcg.None{}, 3); !res.Converged {
			t.Errorf("b = 0: reason %q", res.Reason)
		}
		if n, _ := ddmat.Norm(sys.x); n != 0 {
			t.Errorf("b = 0: ||x|| = %g", n)
		}
		sys.b.BE.Fill(sys.b.V, math.NaN())
		if res = solve(sys, pcg.None{}, 3); res.Reason != pcg.NaN || res.Iterations != 0 {
			t.Errorf("NaN b: reason %q after %d", res.Reason, res.Iterations)
		}
	})
}

// TestSingleReductionHonest: on the nearly singular matrix of
// TestNearlySingularHonest (condition about 4e14), single-reduction CG
// either converges on the true residual or stops at the iteration limit
// (its recurrence, less stable than PCG's, may not reach the tolerance
// there), never reporting a breakdown of this SPD matrix, with every
// preconditioner, on 1 and 3 ranks; Progress and TrueProgress are called
// as for PCG.
func TestSingleReductionHonest(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, name := range precNames {
				sys := rowsSystem(t, c, cpu.New(1), 30, nearlySingular(30, 1e-14))
				M, err := newPrec(sys, name)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				ws, err := pcg.NewSingleReductionWorkspace(sys.op, sys.b)
				if err != nil {
					t.Fatal(err)
				}
				progress, trueProgress := 0, 0
				opt := pcg.Options{Tol: 1e-8, MaxIt: 400, TrueEvery: 5,
					Progress:     func(int, float64) { progress++ },
					TrueProgress: func(int, float64, float64) { trueProgress++ }}
				res, err := ws.Solve(M, sys.b, sys.x, opt)
				ws.Free()
				M.Free()
				if err != nil {
					t.Fatal(err)
				}
				if !checkHonest(t, name, res, 1e-8) && res.Reason != pcg.MaxIterations {
					t.Errorf("%s: %s (%s), want converged or max_iterations", name, res.Reason, res.Detail)
				}
				if progress != res.Iterations || trueProgress == 0 || trueProgress > res.Iterations/5 {
					t.Errorf("%s: %d iterations, %d Progress calls, %d TrueProgress calls", name, res.Iterations, progress, trueProgress)
				}
			}
		})
	}
}
