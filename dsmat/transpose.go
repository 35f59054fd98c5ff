package dsmat

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Transpose returns the distributed transpose of m, under the same
// partition. Collective. The FSAI preconditioner builds G' once with it, so
// that z = G'(G r) is two distributed SpMVs.
//
// The diagonal block is transposed where it is, on all cores; only the
// entries of the off-diagonal blocks travel, each to the owner of its
// column, which makes its off-diagonal blocks of them. A matrix whose
// backend holds its diagonal block (NewLocalOffDiagonal) gives one without:
// the backend transposes that block.
func (m *Matrix) Transpose() (*Matrix, error) {
	t := &Matrix{Comm: m.Comm, Part: m.Part, nnz: m.nnz}
	if m.Diag != nil {
		t.Diag = transposeBlock(m.Diag)
	}
	recv, err := routeTriplets(m.Comm, m.Part, m.transposedOff())
	if err != nil {
		return nil, fmt.Errorf("dsmat: transpose: %w", err)
	}
	lo, hi := t.Part.Range(t.Comm.Rank())
	off, err := offTriplets(t.N(), lo, int(hi-lo), recv)
	if err != nil {
		err = fmt.Errorf("dsmat: transpose: %w", err)
	}
	if err := t.Comm.Agree(err); err != nil {
		return nil, err
	}
	if off != nil {
		t.Off = t.offBlocks(off)
	}
	if err := t.prepare(); err != nil {
		return nil, err
	}
	return t, nil
}

// transposedOff returns the entries of m's off-diagonal blocks with row and
// column swapped, in global numbering: block by block, each in the order of
// its rows.
func (m *Matrix) transposedOff() []Triplet {
	first := m.First()
	at := make([]int, len(m.Off)+1)
	for k, b := range m.Off {
		at[k+1] = at[k] + b.A.NNZ()
	}
	ts := make([]Triplet, at[len(m.Off)])
	for k, b := range m.Off {
		parallel.For(b.A.Rows, func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				col := first + int64(b.Rows[r])
				for e := b.A.RowPtr[r]; e < b.A.RowPtr[r+1]; e++ {
					ts[at[k]+int(e)] = Triplet{Row: b.Cols[b.A.ColIdx[e]], Col: col, Val: b.A.Val[e]}
				}
			}
		})
	}
	return ts
}

// transposeBlock returns a' on all cores. It is a counting sort by column:
// every chunk of a's rows counts its entries per row of a' over the window
// of rows its columns reach (for a banded block a window around its own
// rows, not a count per row of a' for every chunk), and places them after
// those of the chunks before it, so every row of a' holds its entries in
// ascending columns, as the serial sort leaves them.
func transposeBlock(a *csr.Matrix[float64]) *csr.Matrix[float64] {
	chunks := parallel.Chunks(a.Rows)
	count, first := make([][]int32, chunks), make([]int32, chunks)
	parallel.For(a.Rows, func(c, lo, hi int) {
		cols := a.ColIdx[a.RowPtr[lo]:a.RowPtr[hi]]
		if len(cols) == 0 {
			return
		}
		minCol, maxCol := cols[0], cols[0]
		for _, col := range cols {
			minCol, maxCol = min(minCol, col), max(maxCol, col)
		}
		first[c], count[c] = minCol, make([]int32, maxCol-minCol+1)
		for _, col := range cols {
			count[c][col-minCol]++
		}
	})
	// The offsets: the chunks in order, each over its window on all cores.
	// at[r] runs over the entries of row r placed so far; after the last
	// chunk it is the row's length, and the prefix sum makes the pointers.
	t := &csr.Matrix[float64]{Rows: a.Cols, Cols: a.Rows, RowPtr: make([]int32, a.Cols+1)}
	at := t.RowPtr[1:]
	for c, cnt := range count {
		parallel.For(len(cnt), func(_, lo, hi int) {
			for j := lo; j < hi; j++ {
				r := first[c] + int32(j)
				cnt[j], at[r] = at[r], at[r]+cnt[j]
			}
		})
	}
	parallel.Accumulate(t.RowPtr)
	t.ColIdx = make([]int32, a.NNZ())
	t.Val = make([]float64, a.NNZ())
	parallel.For(a.Rows, func(c, lo, hi int) {
		next, base := count[c], first[c]
		for i := lo; i < hi; i++ {
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				j := a.ColIdx[k] - base
				p := t.RowPtr[a.ColIdx[k]] + next[j]
				t.ColIdx[p], t.Val[p] = int32(i), a.Val[k]
				next[j]++
			}
		}
	})
	return t
}

// Transpose returns this rank's stripe of the transpose of the distributed
// matrix whose stripes are rows, under the same partition: the stripe of
// New's matrix transposed. Collective.
func Transpose(c *comm.Comm, part Partition, rows *Rows) (*Rows, error) {
	m, err := New(c, part, rows)
	if err != nil {
		return nil, err
	}
	t, err := m.Transpose()
	if err != nil {
		return nil, err
	}
	return t.Rows(), nil
}
