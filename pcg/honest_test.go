package pcg_test

import (
	"math"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/pcg"
	"github.com/fsai-dist/fsai-dist/problem"
)

// The tests of this file hold the solver to its stop rule on systems whose
// scaling or conditioning defeats a recurrence-only test: a report of
// converged must have a true relative residual at or below the tolerance;
// any other end must name an accurate reason.

var precNames = []string{"none", "jacobi", "afsai", "fsai"}

// rowsSystem distributes the n x n matrix whose stripes gen makes on be,
// with b = A*1 and x = 0.
func rowsSystem(t *testing.T, c *comm.Comm, be backend.Backend, n int64, gen func(lo, hi int64) *dsmat.Rows) *system {
	t.Helper()
	part := dsmat.NewPartition(n, c.Size())
	lo, hi := part.Range(c.Rank())
	return bindSystem(t, c, be, part, gen(lo, hi))
}

// scaledProblem is the stripe [lo, hi) of a generated problem with entry
// (i, j) multiplied by f(i, j).
func scaledProblem(t *testing.T, spec string, f func(i, j int64) float64) (int64, func(lo, hi int64) *dsmat.Rows) {
	t.Helper()
	s, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s.Rows(), func(lo, hi int64) *dsmat.Rows {
		r, err := s.Generate(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Count() {
			for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
				r.Val[k] *= f(lo+int64(i), r.Col[k])
			}
		}
		return r
	}
}

// newPrec sets up the preconditioner of that name (none, jacobi, afsai,
// fsai; the FSAIs with afsai.DefaultConfig, a single-precision set-up).
func newPrec(sys *system, name string) (pcg.Preconditioner, error) {
	switch name {
	case "jacobi":
		return pcg.NewJacobi(sys.A, sys.op.Backend())
	case "afsai", "fsai":
		cfg := afsai.DefaultConfig()
		cfg.Static = name == "fsai"
		return afsai.NewFor(sys.op, cfg)
	}
	return pcg.None{}, nil
}

// checkHonest fails unless res converged with a true relative residual at
// or below tol, or stopped for a reason other than converged with a detail.
// It returns whether res converged.
func checkHonest(t *testing.T, what string, res pcg.Result, tol float64) bool {
	t.Helper()
	switch {
	case res.Converged && !(res.RelRes <= tol):
		t.Errorf("%s: converged with a true relative residual %.3g above the tolerance %.3g (recurrence %.3g)",
			what, res.RelRes, tol, res.RecurrenceRelRes)
	case res.Converged != (res.Reason == pcg.Converged):
		t.Errorf("%s: converged %v with reason %q", what, res.Converged, res.Reason)
	case !res.Converged && res.Detail == "":
		t.Errorf("%s: %s without a detail", what, res.Reason)
	}
	t.Logf("%s: %s after %d iterations, relres %.3g, recurrence %.3g, %d replacements; %s",
		what, res.Reason, res.Iterations, res.RelRes, res.RecurrenceRelRes, res.Replacements, res.Detail)
	return res.Converged
}

// nearlySingular is the n x n Neumann Laplacian of a path plus shift*I.
func nearlySingular(n int64, shift float64) func(lo, hi int64) *dsmat.Rows {
	return func(lo, hi int64) *dsmat.Rows {
		r := neumann(n, lo, hi)
		for i := range r.Count() {
			for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
				if r.Col[k] == lo+int64(i) {
					r.Val[k] += shift
				}
			}
		}
		return r
	}
}

// TestNearlySingularHonest: the 30-row Neumann Laplacian plus 1e-14 I
// (condition about 4e14) with b = A*1: the recurrence of every
// preconditioner falls below 1e-8 while the true residual cannot (the
// attainable accuracy is near 1e-2). Every preconditioner must either
// converge on the true residual or stop with max_iterations saying that the
// attainable accuracy is the limit.
func TestNearlySingularHonest(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, name := range precNames {
				nearlySingularCase(t, c, cpu.New(1), name)
			}
		})
	}
}

// nearlySingularCase runs the case of TestNearlySingularHonest with one
// preconditioner on be.
func nearlySingularCase(t *testing.T, c *comm.Comm, be backend.Backend, name string) {
	t.Helper()
	sys := rowsSystem(t, c, be, 30, nearlySingular(30, 1e-14))
	M, err := newPrec(sys, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer M.Free()
	const tol = 1e-8
	res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: tol, MaxIt: 400})
	if err != nil {
		t.Fatal(err)
	}
	if !checkHonest(t, name, res, tol) && (res.Reason != pcg.MaxIterations || res.Replacements == 0 ||
		!strings.Contains(res.Detail, "attainable accuracy")) {
		t.Errorf("%s: %s after %d replacements (%s), want max_iterations limited by the attainable accuracy",
			name, res.Reason, res.Replacements, res.Detail)
	}
}

// TestTinyTolerance: at tolerance 1e-20, below what double precision
// attains on poisson7:6, the solve never reports converged with a true
// residual above it; it ends at the iteration limit, naming the attainable
// accuracy, with the true residual near its floor.
func TestTinyTolerance(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, name := range []string{"none", "jacobi"} {
				sys := setup(t, c, "poisson7:6", 1)
				M, err := newPrec(sys, name)
				if err != nil {
					t.Fatal(err)
				}
				res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-20, MaxIt: 200})
				if err != nil {
					t.Fatal(err)
				}
				M.Free()
				if checkHonest(t, name, res, 1e-20) {
					continue
				}
				if res.Reason != pcg.MaxIterations || !strings.Contains(res.Detail, "attainable accuracy") || res.RelRes > 1e-13 {
					t.Errorf("%s: %s, relres %.3g (%s), want max_iterations at the attainable accuracy", name, res.Reason, res.RelRes, res.Detail)
				}
			}
		})
	}
}

// risingDiagonal is diag(lambda) with lambda geometric from 1 to 1e10 over
// 30 rows; with b_i = lambda_i^-1/2, the residual of plain CG stays above
// its start for about 170 of its about 220 iterations (the CG residual is
// not monotone: CG minimizes the A-norm of the error).
func risingDiagonal(lo, hi int64) *dsmat.Rows {
	r := &dsmat.Rows{N: 30, First: lo, RowPtr: []int64{0}}
	for i := lo; i < hi; i++ {
		r.Col, r.Val = append(r.Col, i), append(r.Val, math.Pow(1e10, float64(i)/29))
		r.RowPtr = append(r.RowPtr, int64(len(r.Col)))
	}
	return r
}

// TestRisingResidualNotStopped: the default options do not stop a CG solve
// whose residual stays above its start for over 150 iterations before it
// converges; a stagnation window of 100 (the test on, which the default is
// not) would have.
func TestRisingResidualNotStopped(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			solve := func(window int) pcg.Result {
				sys := rowsSystem(t, c, cpu.New(1), 30, risingDiagonal)
				// b_i = lambda_i^-1/2: x = lambda^-3/2 gives it
				host := make([]float64, sys.x.Rows)
				for i := range host {
					host[i] = math.Pow(1e10, -1.5*float64(sys.A.First()+int64(i))/29)
				}
				if err := sys.x.Set(host); err != nil {
					t.Fatal(err)
				}
				if err := sys.op.Apply(sys.b.V, sys.x.V); err != nil {
					t.Fatal(err)
				}
				sys.op.Backend().Fill(sys.x.V, 0)
				res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 2000, Stagnation: window})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			res := solve(pcg.DefaultStagnation)
			if !checkHonest(t, "default", res, 1e-8) {
				t.Fatalf("default options: %s after %d iterations, want converged", res.Reason, res.Iterations)
			}
			above := 0
			for it, v := range res.History {
				if v >= res.History[0] {
					above = it
				}
			}
			if above < 150 {
				t.Fatalf("the residual is above its start until iteration %d only: the case does not test a long rise", above)
			}
			if res := solve(100); res.Reason != pcg.Stagnation {
				t.Errorf("window 100: %s after %d iterations, want stagnation", res.Reason, res.Iterations)
			}
		})
	}
}

// TestScaledRightHandSide: b = A*1 times 1e-200 and times 1e200 (norms
// 1e-199 and 1e201, whose squares under- and overflow) solve like b = A*1:
// the same iterations and x scaled by the same factor.
func TestScaledRightHandSide(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			base := setup(t, c, "poisson7:6", 1)
			M, err := pcg.NewJacobi(base.A, base.op.Backend())
			if err != nil {
				t.Fatal(err)
			}
			want, err := pcg.Solve(base.op, M, base.b, base.x, pcg.Options{Tol: 1e-8, MaxIt: 500})
			if err != nil || !want.Converged {
				t.Fatalf("b = A*1: %s, %v", want.Reason, err)
			}
			wantX := make([]float64, base.x.Rows)
			if err := base.x.Get(wantX); err != nil {
				t.Fatal(err)
			}
			for _, f := range []float64{1e-200, 1e200} {
				sys := setup(t, c, "poisson7:6", 1)
				ddmat.Axpby(sys.b, f, base.b, 0)
				res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 500})
				if err != nil {
					t.Fatal(err)
				}
				if !checkHonest(t, "scaled", res, 1e-8) || res.Iterations != want.Iterations {
					t.Fatalf("b times %g: %s after %d iterations, want converged after %d", f, res.Reason, res.Iterations, want.Iterations)
				}
				x := make([]float64, sys.x.Rows)
				if err := sys.x.Get(x); err != nil {
					t.Fatal(err)
				}
				for i := range x {
					if math.Abs(x[i]/f-wantX[i]) > 1e-12*math.Abs(wantX[i]) {
						t.Fatalf("b times %g: x[%d]/%g = %.17g, want %.17g", f, i, f, x[i]/f, wantX[i])
					}
				}
			}
		})
	}
}

// TestSubnormalMatrix: poisson7:4 scaled by 1e-310, whose entries are
// subnormal numbers, with b = A*1 (subnormal too; ||b|| underflowed to 0,
// which gave x = 0 and converged). Whatever the preconditioner (or its
// set-up's refusal), no solve reports converged unless the true residual
// meets the tolerance, and x = 0 never does.
func TestSubnormalMatrix(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			n, gen := scaledProblem(t, "poisson7:4", func(_, _ int64) float64 { return 1e-310 })
			for _, name := range precNames {
				sys := rowsSystem(t, c, cpu.New(1), n, gen)
				M, err := newPrec(sys, name)
				if err != nil {
					t.Logf("%s: set-up refused: %v", name, err)
					continue
				}
				res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 300})
				M.Free()
				if err != nil {
					t.Fatal(err)
				}
				if checkHonest(t, name, res, 1e-8) && res.Iterations == 0 {
					t.Errorf("%s: converged at once from x = 0 with relres %.3g", name, res.RelRes)
				}
			}
		})
	}
}

// TestNaNRightHandSide: a NaN in b stops the solve at once with reason
// nan, naming the right-hand side.
func TestNaNRightHandSide(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		sys := setup(t, c, "poisson7:6", 1)
		host := make([]float64, sys.b.Rows)
		if err := sys.b.Get(host); err != nil {
			t.Fatal(err)
		}
		if c.Rank() == 1 {
			host[0] = math.NaN()
		}
		if err := sys.b.Set(host); err != nil {
			t.Fatal(err)
		}
		res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 100})
		if err != nil {
			t.Fatal(err)
		}
		if res.Converged || res.Reason != pcg.NaN || res.Iterations != 0 || !strings.Contains(res.Detail, "right-hand side") {
			t.Fatalf("reason %q after %d iterations (%s), want nan", res.Reason, res.Iterations, res.Detail)
		}
	})
}

// TestBlockHonest: the stop rule holds column by column in a block solve.
// On the nearly singular matrix of TestNearlySingularHonest, column 0 (b =
// A*1) and column 1 (b_i = 1 + i mod 3, far from the near null space) run
// their own replacements and stop on their own, each with its own outcome.
func TestBlockHonest(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := rowsSystem(t, c, cpu.New(1), 30, nearlySingular(30, 1e-14))
			be, n := sys.op.Backend(), sys.A.LocalRows()
			col0 := make([]float64, n)
			if err := sys.b.Get(col0); err != nil {
				t.Fatal(err)
			}
			host := make([]float64, 2*n)
			for i := range n {
				host[2*i], host[2*i+1] = col0[i], float64(1+(sys.A.First()+int64(i))%3)
			}
			b, _ := ddmat.New(c, be, n, 2)
			x, _ := ddmat.New(c, be, n, 2)
			if err := b.Set(host); err != nil {
				t.Fatal(err)
			}
			M, err := pcg.NewJacobi(sys.A, be)
			if err != nil {
				t.Fatal(err)
			}
			res, err := pcg.SolveBlock(sys.op, M, b, x, pcg.Options{Tol: 1e-8, MaxIt: 300})
			if err != nil {
				t.Fatal(err)
			}
			for k, r := range res {
				checkHonest(t, "column", r, 1e-8)
				if len(r.History) != r.Iterations+1 {
					t.Errorf("column %d: %d history entries for %d iterations", k, len(r.History), r.Iterations)
				}
			}
			one, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 300})
			if err != nil {
				t.Fatal(err)
			}
			if one.Reason != res[0].Reason || one.Replacements != res[0].Replacements || one.Iterations != res[0].Iterations {
				t.Errorf("column 0: %s after %d iterations, %d replacements; alone: %s after %d, %d",
					res[0].Reason, res[0].Iterations, res[0].Replacements, one.Reason, one.Iterations, one.Replacements)
			}
		})
	}
}

// TestScaledSetup: D A D, A = poisson7:4 and D from 1e-150 to 1e150
// (geometric over the rows; entries from 1e-300 to 1e300), and poisson7:4
// with one diagonal entry 1e308 set up with the default single-precision
// aFSAI and static FSAI: the set-up runs on the symmetrically scaled
// matrix (prec_info.scaled), and the solves converge on the true residual
// (in a few iterations: the relative residual is dominated by the rows of
// large entries). poisson7:4 itself sets up unscaled.
func TestScaledSetup(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			scaledSetupCases(t, c, cpu.New(1))
		})
	}
}

// scaledSetupCases runs the cases of TestScaledSetup on be.
func scaledSetupCases(t *testing.T, c *comm.Comm, be backend.Backend) {
	t.Helper()
	base := func(_, _ int64) float64 { return 1 }
	d := func(i int64) float64 { return math.Pow(10, -150+300*float64(i)/63) }
	huge := func(i, j int64) float64 {
		if i == 37 && j == 37 {
			return 1e308 / 6
		}
		return 1
	}
	for _, name := range []string{"afsai", "fsai"} {
		scaledSetupCase(t, c, be, name, base, false)
		scaledSetupCase(t, c, be, name, func(i, j int64) float64 { return d(i) * d(j) }, true)
		scaledSetupCase(t, c, be, name, huge, true)
	}
}

// scaledSetupCase solves poisson7:4 with entry (i, j) times f(i, j) and b =
// A*1 with preconditioner name on be, and checks that its set-up ran scaled or
// not and that the solve converged.
func scaledSetupCase(t *testing.T, c *comm.Comm, be backend.Backend, name string, f func(i, j int64) float64, scaled bool) {
	t.Helper()
	n, gen := scaledProblem(t, "poisson7:4", f)
	sys := rowsSystem(t, c, be, n, gen)
	M, err := newPrec(sys, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer M.Free()
	if got := M.(*afsai.Preconditioner).Info.Scaled; got != scaled {
		t.Errorf("%s: set-up scaled %v, want %v", name, got, scaled)
	}
	res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 300})
	if err != nil {
		t.Fatal(err)
	}
	if !checkHonest(t, name, res, 1e-8) {
		t.Errorf("%s: %s after %d iterations, want converged", name, res.Reason, res.Iterations)
	}
}
