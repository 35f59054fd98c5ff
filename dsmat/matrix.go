// Package dsmat is the distributed sparse matrix (DSMat) of the blueprint,
// section 4.1: every rank owns a stripe of consecutive rows, split by column
// owner into a diagonal block (columns it owns) and left and right blocks
// (columns owned by lower and higher ranks). Off-diagonal blocks number their
// columns compactly over the halo, the entries actually needed from that
// neighbour, so only those travel in an SpMV.
//
// The package builds the halo plan once per matrix, binds the matrix to a
// backend as an Operator (the overlapped SpMV) and moves values between
// matrices of one pattern (ValuePlan, ValueSlots). Files of matrices and
// vectors are read and written by package matfile, which builds the stripes
// (Rows) this package splits.
package dsmat

import (
	"fmt"
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Block is an off-diagonal block of a stripe: the entries whose columns rank
// Rank owns, with columns renumbered 0..len(Cols)-1 and only the rows that
// have entries stored (a block that couples two stripes touches few of their
// rows): row k of A is local row Rows[k] of the stripe.
type Block struct {
	Rank int
	A    *csr.Matrix[float64]
	Rows []int32 // local row of each stored row, ascending
	Cols []int64 // global index of each compact column, ascending
}

// Row returns the columns (compact numbering) and values of local row i of
// the stripe in the block, empty when the block has none.
func (b *Block) Row(i int) ([]int32, []float64) {
	k, found := slices.BinarySearch(b.Rows, int32(i))
	if !found {
		return nil, nil
	}
	return b.A.Row(k)
}

// Matrix is one rank's part of a distributed square matrix.
type Matrix struct {
	Comm *comm.Comm
	Part Partition
	// Diag is the diagonal block, columns numbered from the stripe's first
	// row; nil when a backend holds it alone (NewLocalOffDiagonal). Its
	// values change through SetValues and ValueSlots, which keep
	// DiagonalRange current.
	Diag *csr.Matrix[float64]
	Off  []Block // left blocks then right blocks, by rank
	// Sends lists, per neighbour that needs entries of this rank's part of a
	// vector, which local entries it needs (the halo plan).
	Sends []Send
	nnz   int64 // global, both triangles
	// diagRange is Diag's diagonal range as the last pass that wrote its
	// values recorded it, or nil (DiagonalRange)
	diagRange *diagRange
}

// Send is what one neighbour receives from this rank in every SpMV.
type Send struct {
	Rank int
	Idx  []int32 // local indices into this rank's stripe
}

// New splits the stripe rows (owned by this rank under part) into the
// diagonal and off-diagonal blocks and builds the halo plan. It is
// collective: every rank of c calls it.
func New(c *comm.Comm, part Partition, rows *Rows) (*Matrix, error) {
	lo, hi := part.Range(c.Rank())
	err := rows.Check()
	if err == nil {
		err = checkStripeEntries(rows.NNZ(), c.Rank())
	}
	if err == nil && (part.Ranks() != c.Size() || rows.First != lo || int64(rows.Count()) != hi-lo || rows.N != part.N()) {
		err = fmt.Errorf("dsmat: stripe of rows [%d,%d) of %d does not match the partition's [%d,%d) of %d",
			rows.First, rows.First+int64(rows.Count()), rows.N, lo, hi, part.N())
	}
	if err := c.Agree(err); err != nil {
		return nil, err
	}
	m := &Matrix{Comm: c, Part: part}
	m.split(rows)
	if err := m.finish(rows.NNZ()); err != nil {
		return nil, err
	}
	return m, nil
}

// checkStripeEntries refuses a stripe of more nonzeros than its CSR
// blocks' int32 row pointers can count, before the split would overflow
// them: the matrix then needs more ranks.
func checkStripeEntries(nnz int64, rank int) error {
	if nnz > math.MaxInt32 {
		return fmt.Errorf("dsmat: %d nonzeros on rank %d, more than the %d a rank's CSR blocks can hold: use more ranks",
			nnz, rank, math.MaxInt32)
	}
	return nil
}

// finish builds the halo plan and counts the global nonzeros from this
// rank's nnz. Collective.
func (m *Matrix) finish(nnz int64) error {
	if err := m.prepare(); err != nil {
		return err
	}
	total, err := comm.AllreduceScalar(m.Comm, comm.Sum, nnz)
	if err != nil {
		return fmt.Errorf("dsmat: count nonzeros: %w", err)
	}
	m.nnz = total
	return nil
}

// split sorts the entries of the stripe into the diagonal block and one block
// per column owner, on all cores, and records the diagonal's range.
func (m *Matrix) split(rows *Rows) {
	lo, hi := m.Part.Range(m.Comm.Rank())
	nrows := rows.Count()
	own := func(col int64) bool { return col >= lo && col < hi }
	m.Diag = &csr.Matrix[float64]{Rows: nrows, Cols: int(hi - lo), RowPtr: make([]int32, nrows+1)}
	counts := newOffChunks(nrows)
	parallel.For(nrows, func(c, a, b int) {
		offRows, off := 0, 0
		for i := a; i < b; i++ {
			n := int32(0)
			cols := rows.Col[rows.RowPtr[i]:rows.RowPtr[i+1]]
			for _, col := range cols {
				if own(col) {
					n++
				}
			}
			m.Diag.RowPtr[i+1] = n
			if o := len(cols) - int(n); o > 0 {
				offRows, off = offRows+1, off+o
			}
		}
		counts.rows[c], counts.nnz[c] = offRows, off
	})
	parallel.Accumulate(m.Diag.RowPtr)
	m.Diag.ColIdx = make([]int32, m.Diag.RowPtr[nrows])
	m.Diag.Val = make([]float64, len(m.Diag.ColIdx))
	off, rowAt, nnzAt := counts.entries()
	diag := newRangeParts(nrows)
	parallel.For(nrows, func(c, a, b int) {
		r, o := rowAt[c], nnzAt[c]
		acc := newDiagAcc()
		for i := a; i < b; i++ {
			w, start := m.Diag.RowPtr[i], o
			for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
				if col, val := rows.Col[k], rows.Val[k]; own(col) {
					m.Diag.ColIdx[w], m.Diag.Val[w] = int32(col-lo), val
					w++
				} else {
					off.col[o], off.val[o] = col, val
					o++
				}
			}
			if o > start {
				off.rows[r], off.ptr[r+1] = int32(i), int64(o)
				r++
			}
			acc.add(diagonalEntry(m.Diag, i))
		}
		diag[c] = acc
	})
	m.diagRange = diag.total(m.Diag)
	if off != nil {
		m.Off = m.offBlocks(off)
	}
}

// prepare tells every owner which of its entries this rank needs, and learns
// in turn what to send to whom: the halo plan, built once per matrix.
func (m *Matrix) prepare() error {
	c := m.Comm
	np := c.Size()
	sendCounts := make([]int, np)
	var want []int64
	for _, b := range m.Off {
		sendCounts[b.Rank] = len(b.Cols)
		want = append(want, b.Cols...)
	}
	counts := make([]int32, np)
	for q, n := range sendCounts {
		counts[q] = int32(n)
	}
	recvCounts32 := make([]int32, np)
	if err := comm.Alltoall(c, counts, recvCounts32); err != nil {
		return fmt.Errorf("dsmat: prepare halo counts: %w", err)
	}
	recvCounts := make([]int, np)
	total := 0
	for q, n := range recvCounts32 {
		recvCounts[q] = int(n)
		total += int(n)
	}
	asked := make([]int64, total)
	if err := comm.Alltoallv(c, want, sendCounts, asked, recvCounts); err != nil {
		return fmt.Errorf("dsmat: prepare halo lists: %w", err)
	}
	first, _ := m.Part.Range(c.Rank())
	m.Sends = nil
	off := 0
	for q, n := range recvCounts {
		if n == 0 {
			continue
		}
		idx := make([]int32, n)
		for k, g := range asked[off : off+n] {
			idx[k] = int32(g - first)
		}
		m.Sends = append(m.Sends, Send{Rank: q, Idx: idx})
		off += n
	}
	return nil
}

// N is the global dimension.
func (m *Matrix) N() int64 { return m.Part.N() }

// NNZ is the global number of stored entries (both triangles).
func (m *Matrix) NNZ() int64 { return m.nnz }

// LocalRows is the number of rows this rank owns.
func (m *Matrix) LocalRows() int { return m.Part.Size(m.Comm.Rank()) }

// SetDiagonal gives a Matrix made without its diagonal block
// (NewLocalOffDiagonal, or Transpose of one) a host copy of it, d, read
// back from the backend that holds it: what SetValues, value slots and
// Refresh work on. d's layout must be the backend block's.
func (m *Matrix) SetDiagonal(d *csr.Matrix[float64]) error {
	n := m.LocalRows()
	switch {
	case m.Diag != nil:
		return fmt.Errorf("dsmat: set the diagonal block of a matrix that has one")
	case d.Rows != n || d.Cols != n || len(d.RowPtr) != n+1 || int(d.RowPtr[n]) != len(d.ColIdx) || len(d.Val) != len(d.ColIdx):
		return fmt.Errorf("dsmat: diagonal block of %dx%d (%d row pointers, %d columns, %d values) for a stripe of %d rows",
			d.Rows, d.Cols, len(d.RowPtr), len(d.ColIdx), len(d.Val), n)
	}
	m.Diag = d
	return nil
}

// DropDiagonal forgets the host copy of the diagonal block, for a matrix
// whose block lives on a backend and changes there (an FSAI factor updated
// on the device): a host copy would go stale. SetDiagonal gives one back.
func (m *Matrix) DropDiagonal() { m.Diag = nil }

// First is the global index of this rank's first row.
func (m *Matrix) First() int64 { return m.Part.Offsets[m.Comm.Rank()] }

// Diagonal returns this rank's entries of the matrix diagonal, found on all
// cores. m must hold its diagonal block (Diag).
func (m *Matrix) Diagonal() []float64 {
	d := make([]float64, m.Diag.Rows)
	parallel.For(len(d), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = m.Diag.At(i, i)
		}
	})
	return d
}
