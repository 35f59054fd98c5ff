package dsmat

import (
	"fmt"
	"math"
	"sort"

	"github.com/fsai-dist/fsai-dist/comm"
)

// Checks that a matrix read from a file can be symmetric positive definite.
// They work on the stripes (Rows), before the set-up: a matrix that fails
// them would only fail later, with a less helpful message.

// EmptyRow returns the global index of the first row of the stripe that
// stores no entry, or -1 if there is none. A matrix with an empty row is
// singular.
func (r *Rows) EmptyRow() int64 {
	for i := range r.Count() {
		if r.RowPtr[i] == r.RowPtr[i+1] {
			return r.First + int64(i)
		}
	}
	return -1
}

// Diagonal returns the diagonal entries of the stripe's rows, 0 where none
// is stored.
func (r *Rows) Diagonal() []float64 {
	d := make([]float64, r.Count())
	for i := range d {
		d[i], _ = r.at(r.First+int64(i), r.First+int64(i))
	}
	return d
}

// at returns the stored entry (i, j) of the stripe, which must hold row i,
// and whether it is stored.
func (r *Rows) at(i, j int64) (float64, bool) {
	lo, hi := r.RowPtr[i-r.First], r.RowPtr[i-r.First+1]
	cols := r.Col[lo:hi]
	k := sort.Search(len(cols), func(k int) bool { return cols[k] >= j })
	if k < len(cols) && cols[k] == j {
		return r.Val[lo+int64(k)], true
	}
	return 0, false
}

// CheckSymmetric checks that the distributed matrix whose stripe on this
// rank is rows (under part) is symmetric: that for every stored entry a_ij
// the entry a_ji (0 if not stored) satisfies
//
//	|a_ij - a_ji| <= tol * sqrt(|a_ii a_jj|).
//
// The scale is that of an SPD matrix, whose off-diagonal entries are below
// sqrt(a_ii a_jj): rounding noise in entries far below their diagonals, as
// assembly leaves, is not taken for asymmetry, while a matrix that is not
// symmetric on that scale cannot be the SPD matrix PCG needs.
//
// The check is exact and cheap: an entry whose transpose lies in the same
// stripe is compared there; the others, the entries of the halo, travel
// with a_ii to the owner of their column in one Alltoallv. Collective; the
// rank that finds an asymmetric pair returns an error naming it (1-based),
// the others comm.ErrPeer.
func CheckSymmetric(c *comm.Comm, part Partition, rows *Rows, tol float64) error {
	lo, hi := part.Range(c.Rank())
	diag := rows.Diagonal()
	var bad error
	// compare checks the stored entry (i, j) with value aij against (j, i),
	// of this stripe.
	compare := func(i, j int64, aij, aii float64) {
		if bad != nil {
			return
		}
		aji, stored := rows.at(j, i)
		if math.Abs(aij-aji) <= tol*math.Sqrt(math.Abs(aii*diag[j-lo])) {
			return
		}
		other := "is not stored"
		if stored {
			other = fmt.Sprintf("= %g", aji)
		}
		bad = fmt.Errorf("dsmat: the matrix is not symmetric: A(%d,%d) = %g but A(%d,%d) %s (tolerance %g relative to sqrt(|a_ii a_jj|))",
			i+1, j+1, aij, j+1, i+1, other, tol)
	}
	type entry struct {
		i, j     int64
		aij, aii float64
	}
	var halo []entry
	for li := range rows.Count() {
		i := rows.First + int64(li)
		for k := rows.RowPtr[li]; k < rows.RowPtr[li+1]; k++ {
			switch j := rows.Col[k]; {
			case j == i:
			case j >= lo && j < hi:
				compare(i, j, rows.Val[k], diag[li])
			default:
				halo = append(halo, entry{i, j, rows.Val[k], diag[li]})
			}
		}
	}
	recv, err := exchange(c, len(halo), 4, func(k int) int { return part.Owner(halo[k].j) }, func(k int, w []int64) {
		e := halo[k]
		w[0], w[1], w[2], w[3] = e.i, e.j, int64(math.Float64bits(e.aij)), int64(math.Float64bits(e.aii))
	})
	if err != nil {
		return c.Agree(fmt.Errorf("dsmat: check symmetry: %w", err))
	}
	for k := 0; k < len(recv); k += 4 {
		compare(recv[k], recv[k+1], math.Float64frombits(uint64(recv[k+2])), math.Float64frombits(uint64(recv[k+3])))
	}
	return c.Agree(bad)
}
