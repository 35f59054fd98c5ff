package dsmat

import (
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Rows returns this rank's stripe of m in global numbering, the form New
// splits: a copy, on all cores. m must hold its diagonal block (Diag).
func (m *Matrix) Rows() *Rows {
	n := m.LocalRows()
	r := &Rows{N: m.N(), First: m.First(), RowPtr: make([]int64, n+1)}
	parallel.For(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			r.RowPtr[i+1] = int64(m.Diag.RowPtr[i+1] - m.Diag.RowPtr[i])
		}
	})
	for _, b := range m.Off {
		parallel.For(len(b.Rows), func(_, lo, hi int) {
			for k := lo; k < hi; k++ {
				r.RowPtr[b.Rows[k]+1] += int64(b.A.RowPtr[k+1] - b.A.RowPtr[k])
			}
		})
	}
	for i := range n {
		r.RowPtr[i+1] += r.RowPtr[i]
	}
	r.Col = make([]int64, r.NNZ())
	r.Val = make([]float64, r.NNZ())

	// Row by row the left blocks, the diagonal block, then the right blocks:
	// owners ascend with columns, so every row comes out sorted. next[i] is
	// where row i's next entry goes.
	next := slices.Clone(r.RowPtr[:n])
	put := func(a *csr.Matrix[float64], row func(k int) int32, col func(j int32) int64) {
		parallel.For(a.Rows, func(_, lo, hi int) {
			for k := lo; k < hi; k++ {
				i := row(k)
				for e := a.RowPtr[k]; e < a.RowPtr[k+1]; e++ {
					r.Col[next[i]], r.Val[next[i]] = col(a.ColIdx[e]), a.Val[e]
					next[i]++
				}
			}
		})
	}
	putBlock := func(b *Block) {
		put(b.A, func(k int) int32 { return b.Rows[k] }, func(j int32) int64 { return b.Cols[j] })
	}
	me, b := m.Comm.Rank(), 0
	for ; b < len(m.Off) && m.Off[b].Rank < me; b++ {
		putBlock(&m.Off[b])
	}
	put(m.Diag, func(k int) int32 { return int32(k) }, func(j int32) int64 { return r.First + int64(j) })
	for ; b < len(m.Off); b++ {
		putBlock(&m.Off[b])
	}
	return r
}
