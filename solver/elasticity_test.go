package solver_test

import (
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestElasticity: on 1 and 3 ranks each rank's stripe of elasticity,
// generated on its own, equals bit for bit the same rows of the whole
// matrix; Jacobi and aFSAI PCG solve it (converged on the true residual,
// x near the exact solution), aFSAI in fewer iterations. The iteration
// counts are logged.
func TestElasticity(t *testing.T) {
	const spec = "elasticity:6:1e3:0.45"
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			s, mine := stripe(t, c, spec)
			lo, hi := mine.First, mine.First+int64(mine.Count())
			whole, err := s.Generate(0, s.Rows())
			if err != nil {
				t.Fatal(err)
			}
			a, b := whole.RowPtr[lo], whole.RowPtr[hi]
			same := slices.Equal(mine.Col, whole.Col[a:b]) && slices.Equal(mine.Val, whole.Val[a:b])
			for i, p := range mine.RowPtr {
				same = same && p == whole.RowPtr[lo+int64(i)]-a
			}
			if !same {
				t.Errorf("rank %d: rows [%d,%d) differ from the whole matrix's", c.Rank(), lo, hi)
			}

			sys := newSystem(t, c, spec)
			its := map[string]int{}
			for _, prec := range []string{"jacobi", "afsai"} {
				its[prec] = solve(t, c, sys, newSolver(t, sys.matrix(t, c, sys.vals), prec), sys.vals, wave)
			}
			t.Logf("%s on %d ranks: Jacobi %d iterations, aFSAI %d", spec, np, its["jacobi"], its["afsai"])
			if its["afsai"] >= its["jacobi"] {
				t.Errorf("aFSAI %d iterations, Jacobi %d", its["afsai"], its["jacobi"])
			}
		})
	}
}
