package solver

import (
	"errors"
	"fmt"
	"math"
)

// ErrInput marks the errors of Solve and SolveMany that come from what the
// caller passed (errors.Is): a right-hand side or initial guess that holds
// NaN or Inf, on which no solve can succeed.
var ErrInput = errors.New("bad input")

// checkFinite returns an ErrInput error on the ranks whose b or x (k columns
// of LocalRows entries each) hold NaN or Inf, naming the first such entry
// by its global row and column, and comm.ErrPeer on the others. Collective.
func (s *Solver) checkFinite(b, x []float64, k int) error {
	var err error
	for _, v := range []struct {
		name string
		vals []float64
	}{{"b", b}, {"x", x}} {
		if i := firstNotFinite(v.vals); i >= 0 {
			err = s.inputError(v.name, i, v.vals[i], k)
			break
		}
	}
	return s.m.Comm().Agree(err)
}

// inputError describes entry i of a vector of k columns that is not finite.
func (s *Solver) inputError(name string, i int, v float64, k int) error {
	n := s.m.LocalRows()
	row := s.m.First() + int64(i%n) + 1
	if k == 1 {
		return fmt.Errorf("solver: %w: %s(%d) = %v is not finite", ErrInput, name, row, v)
	}
	return fmt.Errorf("solver: %w: %s(%d, %d) = %v is not finite", ErrInput, name, row, i/n+1, v)
}

// firstNotFinite returns the index of the first NaN or infinite value of v,
// or -1.
func firstNotFinite(v []float64) int {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return i
		}
	}
	return -1
}
