package solver_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestUpdateScaled: UpdateValues to 1e30 A, whose diagonal needs the
// scaled FSAI set-up, and back to A: each time the solve converges in the
// iterations of a fresh solver on those values, with aFSAI and static
// FSAI.
func TestUpdateScaled(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := newSystem(t, c, "diffusion:6")
			big := sys.scaled(func(int64) float64 { return 1e15 })
			for _, prec := range []string{"fsai", "afsai"} {
				s := newSolver(t, sys.matrix(t, c, sys.vals), prec)
				for k, vals := range [][]float64{big, sys.vals, sys.vals} {
					if err := s.UpdateValues(vals); err != nil {
						t.Fatal(err)
					}
					if scaled := s.Preconditioner().(*afsai.Preconditioner).Info.Scaled; scaled != (k == 0) {
						t.Errorf("%s: update %d: set-up scaled %v", prec, k, scaled)
					}
					got := solve(t, c, sys, s, vals, wave)
					if want := solve(t, c, sys, newSolver(t, sys.matrix(t, c, vals), prec), vals, wave); got != want {
						t.Errorf("%s: %d iterations after UpdateValues, %d from a fresh set-up", prec, got, want)
					}
				}
			}
		})
	}
}
