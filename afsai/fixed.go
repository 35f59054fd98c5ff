package afsai

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// FixedPattern computes the exact FSAI rows of A on given patterns: for
// requested row k (local row i = rows[k]) with off-diagonal columns
// P = patterns[k] it solves A[P,P] g = -A[P,i] and returns the row
// (g, 1)/sqrt(psi), psi = a_ii + g'A[P,i], so that diag(G A G') = I.
//
// Each pattern lists distinct columns j <= i; the diagonal is implied and
// may be listed. Columns are factored in the order given: if the Cholesky
// of A[P,P] breaks down (possible in float32), the row keeps the columns
// before the failing one and is counted in Stats.FallbackRows.
func FixedPattern[T csr.Real](a *csr.Matrix[T], rows []int, patterns [][]int32) (*csr.Matrix[T], Stats, error) {
	diag, err := CheckFixed(a, rows, patterns)
	if err != nil {
		return nil, Stats{}, err
	}
	return computeRows(rows, a.Cols, func(k int) int { return len(patterns[k]) + 1 }, func() rowFunc[T] {
		f := newFactor(a, diag)
		return func(k int, out *rowOut[T]) {
			f.reset(rows[k])
			f.addAll(patterns[k], out)
			out.add(f.row())
		}
	})
}

// addAll adds the columns of pattern other than the diagonal, in order,
// stopping at the first breakdown, and then solves for g. It records the
// pattern size and any fallback in out's statistics.
func (f *factor[T]) addAll(pattern []int32, out *rowOut[T]) {
	for _, c := range pattern {
		if int(c) == f.i {
			continue
		}
		if !f.add(c) {
			out.stats.FallbackRows++
			break
		}
	}
	f.solve()
	out.stats.MaxPattern = max(out.stats.MaxPattern, len(f.pat))
}

// CheckFixed validates the arguments of FixedPattern as FixedPattern does
// and returns A's diagonal: for Device implementations, so that they
// accept and refuse the same input. The patterns are checked on all cores;
// the error is the first bad pattern's, in row order.
func CheckFixed[T csr.Real](a *csr.Matrix[T], rows []int, patterns [][]int32) ([]T, error) {
	diag, err := checkInput(a, rows)
	if err != nil {
		return nil, err
	}
	if len(patterns) != len(rows) {
		return nil, fmt.Errorf("afsai: %d patterns for %d rows", len(patterns), len(rows))
	}
	err = parallel.ForErr(len(patterns), func(_, lo, hi int) error {
		var seen []bool // made when the chunk meets a long pattern
		for k := lo; k < hi; k++ {
			if err := checkPattern(patterns[k], rows[k], a.Cols, &seen); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return diag, nil
}

// shortPattern: patterns up to this long are checked for repeated columns
// pair by pair, longer ones by marking their columns in an array of A's
// columns.
const shortPattern = 32

// checkPattern reports a column of row i's pattern p outside [0, i], or
// repeated. *seen, cols false entries, is made at the first long pattern
// and left all false.
func checkPattern(p []int32, i, cols int, seen *[]bool) error {
	for _, c := range p {
		if c < 0 || int(c) > i {
			return fmt.Errorf("afsai: pattern of row %d: column %d not in [0,%d]", i, c, i)
		}
	}
	repeated := func(c int32) error { return fmt.Errorf("afsai: pattern of row %d: column %d repeated", i, c) }
	if len(p) <= shortPattern {
		for x := 1; x < len(p); x++ {
			if slices.Contains(p[:x], p[x]) {
				return repeated(p[x])
			}
		}
		return nil
	}
	if *seen == nil {
		*seen = make([]bool, cols)
	}
	s := *seen
	var err error
	for _, c := range p {
		if s[c] {
			err = repeated(c)
			break
		}
		s[c] = true
	}
	for _, c := range p {
		s[c] = false
	}
	return err
}
