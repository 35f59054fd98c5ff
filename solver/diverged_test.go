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
// stops it early with reason diverged and a detail, on 1 and 3 ranks.
// With DivTol +Inf it goes on to the iteration limit.
func TestDiverged(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := storedNonsym(t, c, "utm1700a")
			opt := nonsymOptions("bicgstab", "jacobi")
			opt.MaxIt = 1000
			res, _, _ := sys.solveWith(t, c, opt)
			if res.Converged || res.Reason != "diverged" || !strings.Contains(res.Detail, "above 1e+05 times the initial") || res.Iterations >= opt.MaxIt {
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
