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
	type slab struct {
		cols []int32 // the columns present, ascending
		lens []int32 // entries of each
		idx  []int32 // rows of m, column by column
		val  []float64
	}
	count := (m.Rows + slabRows - 1) / slabRows
	parts := make([]slab, count)
	parallel.For(count, func(_, lo, hi int) {
		n := make([]int32, m.Cols)
		for q := lo; q < hi; q++ {
			first, last := q*slabRows, min(m.Rows, (q+1)*slabRows)
			p := slab{}
			a, b := m.RowPtr[first], m.RowPtr[last]
			for _, c := range m.ColIdx[a:b] {
				n[c]++
			}
			at := make([]int32, 0, 16) // the start of each present column's entries
			total := int32(0)
			for c, k := range n {
				if k > 0 {
					p.cols, p.lens, at = append(p.cols, int32(c)), append(p.lens, k), append(at, total)
					total += k
				}
			}
			p.idx, p.val = make([]int32, total), make([]float64, total)
			for t, c := range p.cols {
				n[c] = at[t] // from here on: the next free place of column c
			}
			for i := first; i < last; i++ {
				for e := m.RowPtr[i]; e < m.RowPtr[i+1]; e++ {
					c := m.ColIdx[e]
					p.idx[n[c]], p.val[n[c]] = int32(i), m.Val[e]
					n[c]++
				}
			}
			for _, c := range p.cols {
				n[c] = 0
			}
			parts[q] = p
		}
	})
	// Each slab's first row and entry, then the slabs copied in parallel.
	row, entry := make([]int32, count+1), make([]int32, count+1)
	perCol := make([][]int32, m.Cols) // the slab rows of each column
	for q, p := range parts {
		for t, c := range p.cols {
			perCol[c] = append(perCol[c], row[q]+int32(t))
		}
		row[q+1], entry[q+1] = row[q]+int32(len(p.cols)), entry[q]+int32(len(p.idx))
	}
	slabs = &csr.Matrix[float64]{Rows: int(row[count]), Cols: m.Rows, RowPtr: make([]int32, row[count]+1),
		ColIdx: make([]int32, entry[count]), Val: make([]float64, entry[count])}
	parallel.For(count, func(_, lo, hi int) {
		for q := lo; q < hi; q++ {
			p, e := parts[q], entry[q]
			copy(slabs.ColIdx[e:], p.idx)
			copy(slabs.Val[e:], p.val)
			for t, l := range p.lens {
				e += l
				slabs.RowPtr[int(row[q])+t+1] = e
			}
		}
	})
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
