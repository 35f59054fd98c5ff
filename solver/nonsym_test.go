package solver_test

import (
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/matfile"
	"github.com/fsai-dist/fsai-dist/solver"
)

// rowsOf is this rank's rows of a matrix given by a function of the row
// that returns its columns and values, split evenly.
func rowsOf(c *comm.Comm, n int64, row func(i int64) ([]int64, []float64)) *system {
	lo, hi := n*int64(c.Rank())/int64(c.Size()), n*int64(c.Rank()+1)/int64(c.Size())
	sys := &system{n: n, first: lo, rowPtr: []int64{0}}
	for i := lo; i < hi; i++ {
		cols, vals := row(i)
		sys.cols = append(sys.cols, cols...)
		sys.vals = append(sys.vals, vals...)
		sys.rowPtr = append(sys.rowPtr, int64(len(sys.cols)))
	}
	return sys
}

// upwind is the 2D convection-diffusion operator on an m x m grid, five
// points, with first-order upwind convection of wind (wx, wy) >= 0 in
// units of the diffusion: nonsymmetric values on a symmetric pattern, an
// M-matrix (nonsingular).
func upwind(c *comm.Comm, m int64, wx, wy float64) *system {
	return rowsOf(c, m*m, func(i int64) ([]int64, []float64) {
		x, y := i%m, i/m
		cols := []int64{i}
		vals := []float64{4 + wx + wy}
		add := func(ok bool, j int64, v float64) {
			if ok {
				cols, vals = append(cols, j), append(vals, v)
			}
		}
		add(x > 0, i-1, -1-wx)
		add(x < m-1, i+1, -1)
		add(y > 0, i-m, -1-wy)
		add(y < m-1, i+m, -1)
		return cols, vals
	})
}

// skew is the tridiagonal skew-symmetric matrix of n rows (n even, so
// nonsingular): A(i,i+1) = 1, A(i+1,i) = -1, zero diagonal stored.
func skew(c *comm.Comm, n int64) *system {
	return rowsOf(c, n, func(i int64) ([]int64, []float64) {
		cols, vals := []int64{i}, []float64{0}
		if i > 0 {
			cols, vals = append(cols, i-1), append(vals, -1)
		}
		if i < n-1 {
			cols, vals = append(cols, i+1), append(vals, 1)
		}
		return cols, vals
	})
}

// product returns this rank's rows of A x for the whole x.
func (s *system) product(x []float64) []float64 {
	y := make([]float64, len(s.rowPtr)-1)
	for i := range y {
		for k := s.rowPtr[i]; k < s.rowPtr[i+1]; k++ {
			y[i] += s.vals[k] * x[s.cols[k]]
		}
	}
	return y
}

// gather returns the whole vector of which each rank holds its rows.
func (s *system) gather(t *testing.T, c *comm.Comm, local []float64) []float64 {
	t.Helper()
	full := make([]float64, s.n)
	copy(full[s.first:], local)
	if err := comm.Allreduce(c, comm.Sum, full); err != nil {
		t.Fatal(err)
	}
	return full
}

// relres computes ||b - A x||/||b|| on the host, from the rows themselves.
func (s *system) relres(t *testing.T, c *comm.Comm, b, x []float64) float64 {
	t.Helper()
	return relDiff(t, c, s.product(s.gather(t, c, x)), b)
}

// solveWith solves the system with b = A u, u_i = 1 + sin(i), from x = 0,
// and returns the result, x and u (this rank's rows).
func (s *system) solveWith(t *testing.T, c *comm.Comm, opt solver.Options) (solver.Result, []float64, []float64) {
	t.Helper()
	u := make([]float64, s.n)
	for i := range u {
		u[i] = 1 + math.Sin(float64(i))
	}
	return s.solveFor(t, c, opt, u)
}

// solveFor is solveWith for b = A u.
func (s *system) solveFor(t *testing.T, c *comm.Comm, opt solver.Options, u []float64) (solver.Result, []float64, []float64) {
	t.Helper()
	A, err := solver.NewMatrix(c, s.n, s.first, s.rowPtr, s.cols, s.vals)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := solver.New(A, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Free()
	b := s.product(u)
	x := make([]float64, len(b))
	res, err := sv.Solve(b, x)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.relres(t, c, b, x); res.Converged && got > opt.Tol*(1+1e-6) || math.Abs(got-res.RelRes) > 1e-3*got+1e-15 {
		t.Errorf("%s/%s: converged %v with relres %.3g, computed here %.3g (tol %g)", opt.Method, opt.Prec, res.Converged, res.RelRes, got, opt.Tol)
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("%s/%s: x holds %v (reason %s)", opt.Method, opt.Prec, v, res.Reason)
		}
	}
	return res, x, u[s.first : s.first+int64(len(x))]
}

func nonsymOptions(method, prec string) solver.Options {
	opt := solver.DefaultOptions()
	opt.Method, opt.Prec, opt.Backend, opt.Threads = method, prec, "cpu", 1
	return opt
}

// relDiff is ||a - b||/||b|| over all ranks.
func relDiff(t *testing.T, c *comm.Comm, a, b []float64) float64 {
	t.Helper()
	sums := []float64{0, 0}
	for i := range a {
		sums[0] += (a[i] - b[i]) * (a[i] - b[i])
		sums[1] += b[i] * b[i]
	}
	if err := comm.Allreduce(c, comm.Sum, sums); err != nil {
		t.Fatal(err)
	}
	return math.Sqrt(sums[0] / sums[1])
}

// TestMethodsGiveCGSolution: on SPD matrices BiCGSTAB and GMRES, with
// every preconditioner, converge to the solution CG gives: within 1e-7 at
// the tolerance 1e-12 (the solutions of diffusion:8 at 1e-10 differ by
// 2e-6, its condition number times the tolerance).
func TestMethodsGiveCGSolution(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			// diffusion:8's coefficients span decades: it needs a
			// preconditioner, even with CG.
			for _, tc := range []struct {
				spec  string
				precs []string
			}{{"poisson7:8", []string{"none", "jacobi", "afsai"}}, {"diffusion:8", []string{"jacobi", "afsai"}}} {
				spec := tc.spec
				sys := newSystem(t, c, spec)
				for _, prec := range tc.precs {
					opt := nonsymOptions("cg", prec)
					opt.Tol = 1e-12
					cg, xcg, _ := sys.solveWith(t, c, opt)
					for _, method := range []string{"bicgstab", "gmres"} {
						opt.Method = method
						res, x, _ := sys.solveWith(t, c, opt)
						if !cg.Converged || !res.Converged {
							t.Errorf("%s %s/%s: cg %s, %s %s (%s)", spec, method, prec, cg.Reason, method, res.Reason, res.Detail)
						}
						if d := relDiff(t, c, x, xcg); d > 1e-7 {
							t.Errorf("%s %s/%s: ||x - x_cg||/||x_cg|| = %.3g", spec, method, prec, d)
						}
						t.Logf("%s np%d %s/%s: %d iterations (cg %d)", spec, np, method, prec, res.Iterations, cg.Iterations)
					}
				}
			}
		})
	}
}

// TestNonsymmetricBuilt: on 2D upwind convection-diffusion (nonsymmetric
// values, symmetric pattern) at 1 and 3 ranks, BiCGSTAB and GMRES with
// none and Jacobi converge with the true residual at the tolerance, to
// the solution.
func TestNonsymmetricBuilt(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := upwind(c, 20, 8, 3)
			for _, method := range []string{"bicgstab", "gmres"} {
				for _, prec := range []string{"none", "jacobi"} {
					res, x, u := sys.solveWith(t, c, nonsymOptions(method, prec))
					if !res.Converged {
						t.Errorf("%s/%s: %s after %d iterations: %s", method, prec, res.Reason, res.Iterations, res.Detail)
					}
					if d := relDiff(t, c, x, u); d > 1e-5 {
						t.Errorf("%s/%s: ||x - u||/||u|| = %.3g", method, prec, d)
					}
					t.Logf("upwind 20x20 np%d %s/%s: %d iterations, relres %.3g", np, method, prec, res.Iterations, res.RelRes)
				}
			}
		})
	}
}

// storedNonsym reads the stored nonsymmetric matrix name; it skips the
// test where the shared matrices are absent.
func storedNonsym(t *testing.T, c *comm.Comm, name string) *system {
	t.Helper()
	path := "../../shared/matrices/nonsym/" + name + ".mtx"
	if _, err := os.Stat(path); err != nil {
		t.Skip("no ../shared/matrices/nonsym beside the checkout")
	}
	rows, _, err := matfile.ReadMatrix(c, path)
	if err != nil {
		t.Fatal(err)
	}
	return systemOf(rows)
}

// TestStoredNonsymmetric: the stored nonsymmetric matrices whose diagonal
// Jacobi takes (positive), at one rank, with BiCGSTAB and GMRES, none and
// Jacobi.
func TestStoredNonsymmetric(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		for _, name := range []string{"cdde1", "add32"} {
			sys := storedNonsym(t, c, name)
			for _, method := range []string{"bicgstab", "gmres"} {
				for _, prec := range []string{"none", "jacobi"} {
					res, _, _ := sys.solveWith(t, c, nonsymOptions(method, prec))
					if !res.Converged {
						t.Errorf("%s %s/%s: %s after %d iterations: %s", name, method, prec, res.Reason, res.Iterations, res.Detail)
					}
					t.Logf("%s %s/%s: %d iterations, relres %.3g", name, method, prec, res.Iterations, res.RelRes)
				}
			}
		}
	})
}

// TestBiCGSTABNewShadow: on add32 with Jacobi and b = A*1, rho = (r0^, r)
// falls to 4e-16 times ||r0^|| ||r|| at iteration 50, near convergence; a
// new shadow residual (r0^ = r) carries the solve on to convergence.
func TestBiCGSTABNewShadow(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		sys := storedNonsym(t, c, "add32")
		ones := make([]float64, sys.n)
		for i := range ones {
			ones[i] = 1
		}
		if res, _, _ := sys.solveFor(t, c, nonsymOptions("bicgstab", "jacobi"), ones); !res.Converged {
			t.Errorf("%s after %d iterations: %s", res.Reason, res.Iterations, res.Detail)
		}
	})
}

// TestBiCGSTABBreakdown: on a skew-symmetric matrix (r0, A r0) = 0, so
// BiCGSTAB breaks down in its first iteration: reason breakdown, a detail,
// x finite (the initial guess). GMRES solves the same system.
func TestBiCGSTABBreakdown(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := skew(c, 40)
			res, x, _ := sys.solveWith(t, c, nonsymOptions("bicgstab", "none"))
			if res.Converged || res.Reason != "breakdown" || !strings.Contains(res.Detail, "the shadow residual is orthogonal to A M^-1 p") || res.Iterations != 0 {
				t.Errorf("bicgstab on a skew-symmetric matrix: %s after %d iterations: %s", res.Reason, res.Iterations, res.Detail)
			}
			for _, v := range x {
				if v != 0 {
					t.Fatalf("x moved from the initial guess: %v", v)
				}
			}
			if res, _, _ := sys.solveWith(t, c, nonsymOptions("gmres", "none")); !res.Converged {
				t.Errorf("gmres on a skew-symmetric matrix: %s after %d iterations: %s", res.Reason, res.Iterations, res.Detail)
			}
		})
	}
}

// TestGMRESRestart: GMRES with a short restart still converges, over
// several cycles; with too few iterations it ends max_iterations with the
// true residual above the tolerance; a restart longer than the solve needs
// gives the same iterations as any longer one (no restart happened).
func TestGMRESRestart(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		sys := upwind(c, 16, 4, 4)
		opt := nonsymOptions("gmres", "jacobi")
		iters := map[int]int{}
		for _, m := range []int{5, 200, 300} {
			opt.GMRESRestart = m
			res, _, _ := sys.solveWith(t, c, opt)
			if !res.Converged {
				t.Errorf("restart %d: %s after %d iterations: %s", m, res.Reason, res.Iterations, res.Detail)
			}
			iters[m] = res.Iterations
		}
		if iters[5] <= 5 || iters[200] != iters[300] || iters[5] < iters[200] {
			t.Errorf("iterations by restart: %v", iters)
		}
		opt.GMRESRestart, opt.MaxIt = 5, 12
		res, _, _ := sys.solveWith(t, c, opt)
		if res.Converged || res.Reason != "max_iterations" || res.Iterations != 12 || !(res.RelRes > opt.Tol) {
			t.Errorf("restart 5, 12 iterations: %+v", res)
		}
	})
}

// TestOneRightHandSideMethods: BiCGSTAB and GMRES solve one right-hand
// side at a time; SolveMany with two says so, and a GMRES restart of 0
// given to Bind is refused.
func TestOneRightHandSideMethods(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		sys := upwind(c, 4, 1, 1)
		A, err := solver.NewMatrix(c, sys.n, sys.first, sys.rowPtr, sys.cols, sys.vals)
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{"bicgstab", "gmres"} {
			s, err := solver.New(A, nil, nonsymOptions(method, "jacobi"))
			if err != nil {
				t.Fatal(err)
			}
			n := int(sys.n)
			_, err = s.SolveMany(make([]float64, 2*n), make([]float64, 2*n), 2)
			if !errors.Is(err, solver.ErrInput) || !strings.Contains(err.Error(), "2 right-hand sides, but "+method+" solves one at a time") {
				t.Errorf("%s with two right-hand sides: %v", method, err)
			}
			s.Free()
		}
		opt := nonsymOptions("gmres", "jacobi")
		opt.GMRESRestart = 0
		if _, err := solver.Bind(A, nil, opt); err == nil || !strings.Contains(err.Error(), "restart 0") {
			t.Errorf("gmres restart 0: %v", err)
		}
		if !solver.MethodNeedsSPD("cg") || solver.MethodNeedsSPD("gmres") || !solver.PrecNeedsSPD("afsai") || solver.PrecNeedsSPD("jacobi") {
			t.Error("the registry's SPD needs are wrong")
		}
	})
}

// TestNonsymmetricGPU: BiCGSTAB and GMRES with Jacobi and none on the CUDA
// backend take the CPU backend's iterations within 2 and reach its
// solution within 1e-6 relative, on 2D upwind convection-diffusion, at one
// and two ranks (sharing a GPU where the node has one). Skips without a
// GPU.
func TestNonsymmetricGPU(t *testing.T) {
	if n, err := gpu.Available(); err != nil || n == 0 {
		t.Skip("no GPU")
	}
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := upwind(c, 40, 10, 4)
			for _, method := range []string{"bicgstab", "gmres"} {
				for _, prec := range []string{"none", "jacobi"} {
					opt := nonsymOptions(method, prec)
					want, xc, _ := sys.solveWith(t, c, opt)
					opt.Backend, opt.ShareGPU = "cuda", true
					got, xg, _ := sys.solveWith(t, c, opt)
					if d := got.Iterations - want.Iterations; d < -2 || d > 2 || !got.Converged {
						t.Errorf("%s/%s: GPU %d iterations (%s), CPU %d", method, prec, got.Iterations, got.Reason, want.Iterations)
					}
					if d := relDiff(t, c, xg, xc); d > 1e-6 {
						t.Errorf("%s/%s: ||x_gpu - x_cpu||/||x_cpu|| = %.3g", method, prec, d)
					}
				}
			}
		})
	}
}

// TestGMRESStagnation: GMRES(1) on a skew-symmetric matrix makes no
// progress ((r, A r) = 0: the one-step minimization keeps r); with the
// stagnation test on it stops with reason stagnation, x finite, instead
// of running to the limit.
func TestGMRESStagnation(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		opt := nonsymOptions("gmres", "none")
		opt.GMRESRestart, opt.Stagnation = 1, 20
		res, _, _ := skew(c, 40).solveWith(t, c, opt)
		if res.Reason != "stagnation" || res.Iterations > 100 || !(res.RelRes > 0.5) {
			t.Errorf("GMRES(1) on a skew-symmetric matrix: %s after %d iterations, relres %.3g: %s", res.Reason, res.Iterations, res.RelRes, res.Detail)
		}
	})
}

// TestMethodsInterrupted: a stop request on one rank ends BiCGSTAB and
// GMRES on every rank after the same iteration, with reason interrupted
// and a finite x.
func TestMethodsInterrupted(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		sys := upwind(c, 16, 6, 2)
		for _, method := range []string{"bicgstab", "gmres"} {
			calls := 0
			opt := nonsymOptions(method, "none")
			opt.Stop = func() bool { calls++; return c.Rank() == 1 && calls > 5 }
			res, _, _ := sys.solveWith(t, c, opt)
			its, err := comm.AllreduceScalar(c, comm.Max, int64(res.Iterations))
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != "interrupted" || its != int64(res.Iterations) || res.Iterations > 10 {
				t.Errorf("%s: %s after %d iterations (most on any rank %d): %s", method, res.Reason, res.Iterations, its, res.Detail)
			}
		}
	})
}

// TestJacobiNonsymmetric: with BiCGSTAB and GMRES, Jacobi takes a diagonal
// of either sign (orsirr_1's is negative) and solves; CG still refuses it.
// Values-only updates follow the same rule: a negative diagonal entry is
// taken, a zero one refused before anything changes.
func TestJacobiNonsymmetric(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		sys := storedNonsym(t, c, "orsirr_1")
		for _, method := range []string{"bicgstab", "gmres"} {
			res, _, _ := sys.solveWith(t, c, nonsymOptions(method, "jacobi"))
			if !res.Converged {
				t.Errorf("orsirr_1 %s/jacobi: %s after %d iterations: %s", method, res.Reason, res.Iterations, res.Detail)
			}
			t.Logf("orsirr_1 %s/jacobi: %d iterations", method, res.Iterations)
		}
		A, err := solver.NewMatrix(c, sys.n, sys.first, sys.rowPtr, sys.cols, sys.vals)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := solver.New(A, nil, nonsymOptions("cg", "jacobi")); err == nil || !strings.Contains(err.Error(), "is not positive: the matrix is not SPD") {
			t.Errorf("cg/jacobi on orsirr_1: %v", err)
		}
		s, err := solver.New(A, nil, nonsymOptions("gmres", "jacobi"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Free()
		vals := slices.Clone(sys.vals)
		vals[0] = -vals[0] // A(1,1), the first entry of the first row
		if err := s.UpdateValues(vals); err != nil {
			t.Errorf("update to a positive diagonal entry: %v", err)
		}
		vals[0] = 0
		if err := s.UpdateValues(vals); err == nil || !strings.Contains(err.Error(), "A(1,1) = 0 is zero or not finite: Jacobi divides by it") {
			t.Errorf("update to a zero diagonal entry: %v", err)
		}
	})
}

// TestSPAIConverges: BiCGSTAB and GMRES with SPAI (the default pattern)
// converge on every shared nonsymmetric matrix where they converge with
// Jacobi, at one rank, and on two of them at three; the iterations of
// both are logged. CG with SPAI is refused.
func TestSPAIConverges(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			names := []string{"cdde1", "jpwh_991", "orsirr_1", "utm1700a", "watt_2", "rdb2048", "sherman5", "add32"}
			if np > 1 {
				names = []string{"cdde1", "sherman5"}
			}
			for _, name := range names {
				sys := storedNonsym(t, c, name)
				for _, method := range []string{"bicgstab", "gmres"} {
					its := map[string]int{}
					converged := map[string]bool{}
					for _, prec := range []string{"jacobi", "spai"} {
						opt := nonsymOptions(method, prec)
						opt.MaxIt = 3000
						res, _, _ := sys.solveWith(t, c, opt)
						its[prec], converged[prec] = res.Iterations, res.Converged
					}
					if converged["jacobi"] && !converged["spai"] {
						t.Errorf("%s np%d %s: converges with Jacobi in %d iterations, not with SPAI in %d", name, np, method, its["jacobi"], its["spai"])
					}
					t.Logf("%s np%d %s: jacobi %d iterations (converged %v), spai %d (converged %v)",
						name, np, method, its["jacobi"], converged["jacobi"], its["spai"], converged["spai"])
				}
			}
			sys := upwind(c, 4, 1, 1)
			A, err := solver.NewMatrix(c, sys.n, sys.first, sys.rowPtr, sys.cols, sys.vals)
			if err != nil {
				t.Fatal(err)
			}
			bad := nonsymOptions("cg", "spai")
			_, err = solver.New(A, nil, bad)
			mpitest.CheckCollectiveError(t, c, "cg with spai", err, "preconditioner spai is not symmetric, which cg needs")
			bad = nonsymOptions("gmres", "spai")
			bad.SPAI = solver.SPAIParams{Tau: 2, K: 1}
			_, err = solver.New(A, nil, bad)
			mpitest.CheckCollectiveError(t, c, "tau 2", err, "spai: tau 2 is not in [0,1]")
		})
	}
}
