package dsmat

import (
	"fmt"
	"sort"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Partition splits the rows 0..N-1 of a square global matrix into one
// contiguous stripe per rank: rank p owns rows [Offsets[p], Offsets[p+1]).
type Partition struct {
	Offsets []int64
}

// NewPartition balances n rows over np ranks by row count; the first n%np
// ranks get one row more.
func NewPartition(n int64, np int) Partition {
	off := make([]int64, np+1)
	base, extra := n/int64(np), n%int64(np)
	for p := 0; p < np; p++ {
		size := base
		if int64(p) < extra {
			size++
		}
		off[p+1] = off[p] + size
	}
	return Partition{Offsets: off}
}

// N is the global number of rows.
func (p Partition) N() int64 { return p.Offsets[len(p.Offsets)-1] }

// Ranks is the number of stripes.
func (p Partition) Ranks() int { return len(p.Offsets) - 1 }

// Range returns the rows [lo, hi) owned by rank.
func (p Partition) Range(rank int) (lo, hi int64) { return p.Offsets[rank], p.Offsets[rank+1] }

// Size is the number of rows owned by rank.
func (p Partition) Size(rank int) int { return int(p.Offsets[rank+1] - p.Offsets[rank]) }

// Owner returns the rank that owns global row (or column) i.
func (p Partition) Owner(i int64) int {
	// the last offset <= i, skipping empty stripes
	return sort.Search(p.Ranks(), func(r int) bool { return p.Offsets[r+1] > i })
}

// Rows is one rank's stripe of a square global matrix, in CSR with global
// column indices: what the file readers (package matfile) and the problem
// generators produce and what New splits into DSMat blocks. Columns within a row are sorted and unique.
type Rows struct {
	N      int64   // global dimension
	First  int64   // global index of the stripe's first row
	RowPtr []int64 // len Count()+1
	Col    []int64
	Val    []float64
}

// Count is the number of rows in the stripe.
func (r *Rows) Count() int { return len(r.RowPtr) - 1 }

// NNZ is the number of stored entries of the stripe.
func (r *Rows) NNZ() int64 { return r.RowPtr[len(r.RowPtr)-1] }

// Check verifies the invariants of the stripe: pointers consistent, columns
// in range, sorted and unique within each row. The rows are checked on all
// cores; the error is that of the first bad row.
func (r *Rows) Check() error {
	if len(r.RowPtr) == 0 || r.RowPtr[0] != 0 || r.RowPtr[len(r.RowPtr)-1] != int64(len(r.Col)) || len(r.Col) != len(r.Val) {
		return fmt.Errorf("dsmat: stripe row pointers do not match %d columns and %d values", len(r.Col), len(r.Val))
	}
	return parallel.ForErr(r.Count(), func(_, lo, hi int) error { return r.checkRows(lo, hi) })
}

// checkRows checks rows [lo, hi) of a stripe whose first and last row
// pointers are consistent, and returns the error of the first bad one. A
// pointer out of range, which only pointers that decrease somewhere leave,
// is reported rather than read through.
func (r *Rows) checkRows(lo, hi int) error {
	for i := lo; i < hi; i++ {
		start, end := r.RowPtr[i], r.RowPtr[i+1]
		if start > end {
			return fmt.Errorf("dsmat: row %d: row pointer decreases", r.First+int64(i))
		}
		if start < 0 || end > int64(len(r.Col)) {
			return fmt.Errorf("dsmat: row %d: row pointers [%d,%d) out of range [0,%d]", r.First+int64(i), start, end, len(r.Col))
		}
		for k := start; k < end; k++ {
			c := r.Col[k]
			if c < 0 || c >= r.N {
				return fmt.Errorf("dsmat: row %d: column %d out of range [0,%d)", r.First+int64(i), c, r.N)
			}
			if k > start && r.Col[k-1] >= c {
				return fmt.Errorf("dsmat: row %d: columns not sorted and unique at %d", r.First+int64(i), c)
			}
		}
	}
	return nil
}
