package dsmat

import (
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
)

// Equal reports whether m and o are the same rank's part of a matrix held
// the same way: the same partition and global nonzero count, the same
// blocks (values bit for bit) and the same halo plan. Two constructions of
// one matrix must agree on all of it, since the blocks' layout is fixed by
// the matrix alone.
func (m *Matrix) Equal(o *Matrix) bool {
	if m.Comm.Rank() != o.Comm.Rank() || !slices.Equal(m.Part.Offsets, o.Part.Offsets) || m.nnz != o.nnz ||
		(m.Diag == nil) != (o.Diag == nil) || (m.Diag != nil && !sameBlock(m.Diag, o.Diag)) || len(m.Off) != len(o.Off) || len(m.Sends) != len(o.Sends) {
		return false
	}
	for k, b := range m.Off {
		ob := o.Off[k]
		if b.Rank != ob.Rank || !slices.Equal(b.Rows, ob.Rows) || !slices.Equal(b.Cols, ob.Cols) || !sameBlock(b.A, ob.A) {
			return false
		}
	}
	for k, s := range m.Sends {
		if s.Rank != o.Sends[k].Rank || !slices.Equal(s.Idx, o.Sends[k].Idx) {
			return false
		}
	}
	return true
}

// sameBlock reports whether two blocks hold the same entries, values bit for
// bit.
func sameBlock(a, b *csr.Matrix[float64]) bool {
	return a.Rows == b.Rows && a.Cols == b.Cols && slices.Equal(a.RowPtr, b.RowPtr) && slices.Equal(a.ColIdx, b.ColIdx) &&
		slices.EqualFunc(a.Val, b.Val, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
