package solver_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/solver"
)

// TestNonFiniteInput: a NaN or Inf in b or x, on one rank, is refused
// before the solve: an error wrapping solver.ErrInput on that rank,
// comm.ErrPeer on the others, and the solver stays usable.
func TestNonFiniteInput(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := newSystem(t, c, "poisson7:4")
			A := sys.matrix(t, c, sys.vals)
			s := newSolver(t, A, "jacobi")
			last := c.Rank() == np-1
			n := A.LocalRows()
			check := func(what string, err error) {
				t.Helper()
				switch {
				case last && !errors.Is(err, solver.ErrInput):
					t.Errorf("%s: error %v, want one wrapping ErrInput", what, err)
				case !last && !errors.Is(err, comm.ErrPeer):
					t.Errorf("%s: error %v on rank %d, want comm.ErrPeer", what, err, c.Rank())
				}
			}
			for _, v := range []float64{math.NaN(), math.Inf(1)} {
				b, x := make([]float64, n), make([]float64, n)
				if last {
					b[n-1] = v
				}
				_, err := s.Solve(b, x)
				check(fmt.Sprint("b holding ", v), err)
				b[n-1] = 0
				if last {
					x[0] = v
				}
				_, err = s.Solve(b, x)
				check(fmt.Sprint("x holding ", v), err)
				bs := make([]float64, 2*n)
				if last {
					bs[n] = v
				}
				_, err = s.SolveMany(bs, make([]float64, 2*n), 2)
				check(fmt.Sprint("column 2 of b holding ", v), err)
			}
			solve(t, c, sys, s, sys.vals, wave) // still usable
		})
	}
}
