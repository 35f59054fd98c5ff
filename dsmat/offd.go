package dsmat

import (
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
)

// offDiagonal joins the off-diagonal blocks into one CSR block over the
// concatenated halos (block k's columns follow those of the blocks before
// it, the order of the halo buffer), on the rows any block touches. The
// SpMV applies it in one product once every halo has landed, as PETSc's
// and hypre's off-diagonal part: one launch however many neighbours. It
// returns nil without off-diagonal blocks, and a single block as it is; the
// caller only reads it.
func (m *Matrix) offDiagonal() (a *csr.Matrix[float64], rowMap []int32) {
	switch len(m.Off) {
	case 0:
		return nil, nil
	case 1:
		return m.Off[0].A, m.Off[0].Rows
	}
	for _, b := range m.Off {
		rowMap = append(rowMap, b.Rows...)
	}
	slices.Sort(rowMap)
	rowMap = slices.Compact(rowMap)
	shift := make([]int32, len(m.Off)) // the first halo column of each block
	cols := int32(0)
	for k, b := range m.Off {
		shift[k] = cols
		cols += int32(len(b.Cols))
	}
	nnz := 0
	for _, b := range m.Off {
		nnz += b.A.NNZ()
	}
	a = &csr.Matrix[float64]{Rows: len(rowMap), Cols: int(cols), RowPtr: make([]int32, len(rowMap)+1),
		ColIdx: make([]int32, 0, nnz), Val: make([]float64, 0, nnz)}
	next := make([]int, len(m.Off)) // the next stored row of each block
	for r, row := range rowMap {
		for k, b := range m.Off {
			if next[k] < len(b.Rows) && b.Rows[next[k]] == row {
				cs, vs := b.A.Row(next[k])
				for j, c := range cs {
					a.ColIdx = append(a.ColIdx, c+shift[k])
					a.Val = append(a.Val, vs[j])
				}
				next[k]++
			}
		}
		a.RowPtr[r+1] = int32(len(a.ColIdx))
	}
	return a, rowMap
}
