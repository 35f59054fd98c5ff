package solver_test

import (
	"math"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestDiverged: BiCGSTAB with Jacobi runs away on utm1700a (its residual
// passes 1e37 within 5000 iterations); the default divergence tolerance
// stops it with reason diverged and a detail, on 1 and 3 ranks, within
// the 1000 iterations asked for.
// With DivTol +Inf it goes on to the iteration limit.
func TestDiverged(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := storedNonsym(t, c, "utm1700a")
			opt := nonsymOptions("bicgstab", "jacobi")
			opt.MaxIt = 1000
			res, _, _ := sys.solveWith(t, c, opt)
			if res.Converged || res.Reason != "diverged" || !strings.Contains(res.Detail, "above 1e+10 times the initial") || res.Iterations >= opt.MaxIt {
				t.Fatalf("%s after %d iterations: %s", res.Reason, res.Iterations, res.Detail)
			}
			t.Logf("np%d: %s after %d iterations: %s", np, res.Reason, res.Iterations, res.Detail)
			opt.MaxIt, opt.DivTol = 200, math.Inf(1)
			if res, _, _ := sys.solveWith(t, c, opt); res.Reason != "max_iterations" {
				t.Fatalf("DivTol +Inf: %s after %d iterations: %s", res.Reason, res.Iterations, res.Detail)
			}
		})
	}
}

// TestTransientRise: on a convection-dominated problem BiCGSTAB's residual
// rises above 1e5 times the initial one and then converges (b = A*1, x =
// 0, Jacobi, as fsai-dist -problem convdiff:40:1000 -solver bicgstab
// -prec jacobi solves it): a divergence
// tolerance of 1e5 stops it as diverged, the default lets it converge.
func TestTransientRise(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		sys := generatedNonsym(t, c, "convdiff:40:1000")
		opt := nonsymOptions("bicgstab", "jacobi")
		opt.MaxIt = 1000
		ones := make([]float64, sys.n) // b = A*1, as the command line's
		for i := range ones {
			ones[i] = 1
		}
		if res, _, _ := sys.solveFor(t, c, opt, ones); !res.Converged {
			t.Fatalf("default divergence tolerance: %s after %d iterations: %s", res.Reason, res.Iterations, res.Detail)
		}
		opt.DivTol = 1e5
		if res, _, _ := sys.solveFor(t, c, opt, ones); res.Reason != "diverged" {
			t.Fatalf("divergence tolerance 1e5: %s after %d iterations: the residual did not pass 1e5 times the initial one", res.Reason, res.Iterations)
		}
	})
}

// generatedNonsym returns this rank's rows of the generated problem spec
// (stripe's partition), in the order the generator gives them.
func generatedNonsym(t *testing.T, c *comm.Comm, spec string) *system {
	t.Helper()
	_, rows := stripe(t, c, spec)
	return systemOf(rows)
}
