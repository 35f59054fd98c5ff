package twolevel

import (
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// slabRows is the rows of a slab of transposed: enough that a slab row
// holds hundreds of entries, few enough that a tall block has thousands of
// slabs to spread over a GPU's cores.
const slabRows = 2048

// transposed is M' for a tall, thin block M (the rank's rows of Z or A Z:
// millions of rows, a few hundred columns) on the backend, as two
// products: slabs, whose rows are M's columns each restricted to a slab of
// slabRows consecutive rows of M, and sum, which adds up each column's slab
// rows. The plain transpose would be a few hundred rows of tens of
// thousands of entries each, which leave most of a GPU idle; the slabs are
// also built on all cores, slab by slab, and give the same sums on any
// number of them.
type transposed struct {
	slabs, sum backend.Matrix
}

// newTransposed puts M' on the backend, the rows of the sum mapped to
// rowMap (M's columns in the coarse numbering).
func newTransposed(be backend.Backend, m *csr.Matrix[float64], rowMap []int32) (transposed, error) {
	slabs, sum := slabTranspose(m)
	var t transposed
	var err error
	if t.slabs, err = be.NewMatrix(slabs, nil, backend.Double); err == nil {
		t.sum, err = be.NewMatrix(sum, rowMap, backend.Double)
	}
	if err != nil {
		t.free()
	}
	return t, err
}

// rows is the number of slab rows: the length of the intermediate vector
// of a product.
func (t transposed) rows() int { return t.slabs.Rows() }

// apply sets y = M' x for blocks of k columns, through the first rows() x
// k entries of part: y's rows that no column of M maps to are left as they
// are.
func (t transposed) apply(be backend.Backend, y, part, x backend.Vector, k int) {
	part = part.Slice(0, t.rows()*k)
	be.SpMM(part, t.slabs, x, k, 0)
	be.SpMM(y, t.sum, part, k, 0)
}

func (t transposed) free() {
	for _, m := range []backend.Matrix{t.slabs, t.sum} {
		if m != nil {
			m.Free()
		}
	}
}

// slabTranspose returns the slab rows of m' (row r: the entries of one
// column of m within one slab, slab by slab, columns ascending within a
// slab) and the sum: m.Cols x rows, one 1 per slab row in the row of its
// column.
func slabTranspose(m *csr.Matrix[float64]) (slabs, sum *csr.Matrix[float64]) {
	// A slab's entries keep their place in m's arrays: slab q's rows of m'
	// hold entries RowPtr[first row of q] onward, column by column.
	type slab struct {
		cols []int32 // the columns present, ascending
		lens []int32 // entries of each
	}
	count := (m.Rows + slabRows - 1) / slabRows
	parts := make([]slab, count)
	slabs = &csr.Matrix[float64]{Cols: m.Rows, ColIdx: make([]int32, m.NNZ()), Val: make([]float64, m.NNZ())}
	parallel.For(count, func(_, lo, hi int) {
		n := make([]int32, m.Cols)
		for q := lo; q < hi; q++ {
			first, last := q*slabRows, min(m.Rows, (q+1)*slabRows)
			a, b := m.RowPtr[first], m.RowPtr[last]
			for _, c := range m.ColIdx[a:b] {
				n[c]++
			}
			var p slab
			next := a // the place of each present column's first entry
			for c, k := range n {
				if k > 0 {
					p.cols, p.lens = append(p.cols, int32(c)), append(p.lens, k)
					n[c], next = next, next+k // from here on: the next free place of column c
				}
			}
			for i := first; i < last; i++ {
				for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
					c := m.ColIdx[e]
					slabs.ColIdx[n[c]], slabs.Val[n[c]] = int32(i), m.Val[e]
					n[c]++
				}
			}
			for _, c := range p.cols {
				n[c] = 0
			}
			parts[q] = p
		}
	})
	slabs.RowPtr = []int32{0}
	perCol := make([][]int32, m.Cols) // the slab rows of each column
	for _, p := range parts {
		for t, c := range p.cols {
			perCol[c] = append(perCol[c], int32(slabs.Rows))
			slabs.Rows++
			slabs.RowPtr = append(slabs.RowPtr, slabs.RowPtr[len(slabs.RowPtr)-1]+p.lens[t])
		}
	}
	sum = &csr.Matrix[float64]{Rows: m.Cols, Cols: slabs.Rows, RowPtr: make([]int32, m.Cols+1)}
	for c, rs := range perCol {
		sum.RowPtr[c+1] = sum.RowPtr[c] + int32(len(rs))
		sum.ColIdx = append(sum.ColIdx, rs...)
	}
	sum.Val = make([]float64, len(sum.ColIdx))
	for i := range sum.Val {
		sum.Val[i] = 1
	}
	return slabs, sum
}
