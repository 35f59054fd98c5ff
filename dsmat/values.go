package dsmat

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// SetValues replaces the values of the stripe by those of rows, which must
// have the pattern the matrix was built from: the same rows and, row by row,
// the same columns. The blocks keep their memory and the halo plan stays, so
// an Operator bound to the matrix needs only Refresh. Nothing changes when
// the pattern differs. It records the new diagonal's range
// (DiagonalRange). Not collective.
func (m *Matrix) SetValues(rows *Rows) error {
	lo, hi := m.Part.Range(m.Comm.Rank())
	if m.Diag == nil {
		return fmt.Errorf("dsmat: set values: the diagonal block has no host copy (Matrix.SetDiagonal)")
	}
	if err := rows.Check(); err != nil {
		return err
	}
	if rows.First != lo || rows.Count() != int(hi-lo) {
		return fmt.Errorf("dsmat: set values: stripe of rows [%d,%d) for a matrix of rows [%d,%d)",
			rows.First, rows.First+int64(rows.Count()), lo, hi)
	}
	if err := m.place(rows, false); err != nil {
		return err
	}
	return m.place(rows, true)
}

// place walks the entries of rows in the order split gave them to the
// blocks: row by row, the left blocks, the diagonal block and the right
// blocks, each in ascending columns. Since owners ascend with columns, that
// is the order of rows itself. It checks every column against the block's
// and, when write is set, stores the value and records the diagonal's
// range. Every chunk of rows runs on its own core; the error names the
// first row that differs.
func (m *Matrix) place(rows *Rows, write bool) error {
	bad := make([]int, parallel.Chunks(rows.Count())) // per chunk: first row that differs, or -1
	var diag rangeParts                               // nil: not written
	if write {
		diag = newRangeParts(rows.Count())
	}
	parallel.For(rows.Count(), func(c, lo, hi int) {
		bad[c] = m.placeRows(rows, diag, c, lo, hi)
	})
	for _, i := range bad {
		if i >= 0 {
			first, _ := m.Part.Range(m.Comm.Rank())
			return fmt.Errorf("dsmat: set values: row %d: the columns differ from the matrix's pattern", first+int64(i))
		}
	}
	if write {
		m.diagRange = diag.total(m.Diag)
	}
	return nil
}

// placeRows is place on local rows [lo, hi), chunk c of parallel.For,
// writing the values and the range of their diagonal entries (diag[c])
// when diag is not nil; it returns the first row that differs, or -1.
func (m *Matrix) placeRows(rows *Rows, diag rangeParts, c, lo, hi int) int {
	write := diag != nil
	acc := newDiagAcc()
	first, _ := m.Part.Range(m.Comm.Rank())
	next := make([]int, len(m.Off)) // each block's next stored row
	for b := range m.Off {
		next[b], _ = slices.BinarySearch(m.Off[b].Rows, int32(lo))
	}
	var k, end int64
	// take matches one block's part of a row: its columns, global
	// column off+c, or gcols[c] when gcols is set.
	take := func(cols []int32, vals []float64, gcols []int64, off int64) bool {
		if int64(len(cols)) > end-k {
			return false
		}
		for j, c := range cols {
			g := off + int64(c)
			if gcols != nil {
				g = gcols[c]
			}
			if rows.Col[k+int64(j)] != g {
				return false
			}
		}
		if write {
			copy(vals, rows.Val[k:k+int64(len(cols))])
		}
		k += int64(len(cols))
		return true
	}
	takeBlock := func(b int, i int) bool {
		blk := &m.Off[b]
		if next[b] == len(blk.Rows) || int(blk.Rows[next[b]]) != i {
			return true
		}
		r := next[b]
		next[b]++
		p, q := blk.A.RowPtr[r], blk.A.RowPtr[r+1]
		return take(blk.A.ColIdx[p:q], blk.A.Val[p:q], blk.Cols, 0)
	}
	me := m.Comm.Rank()
	for i := lo; i < hi; i++ {
		k, end = rows.RowPtr[i], rows.RowPtr[i+1]
		ok := true
		b := 0
		for ; ok && b < len(m.Off) && m.Off[b].Rank < me; b++ {
			ok = takeBlock(b, i)
		}
		p, q := m.Diag.RowPtr[i], m.Diag.RowPtr[i+1]
		ok = ok && take(m.Diag.ColIdx[p:q], m.Diag.Val[p:q], nil, first)
		for ; ok && b < len(m.Off); b++ {
			ok = takeBlock(b, i)
		}
		if !ok || k != end {
			return i
		}
		if write {
			acc.add(diagonalEntry(m.Diag, i))
		}
	}
	if write {
		diag[c] = acc
	}
	return -1
}

// Refresh copies the matrix's current values (after SetValues) into the
// device blocks that Bind allocated, without reallocating them; only a
// block that Bind narrowed to float32 and whose new values float32 no
// longer holds exactly is uploaded afresh in float64.
func (op *Operator) Refresh() error {
	if op.m.Diag == nil {
		return fmt.Errorf("dsmat: refresh values: the diagonal block has no host copy (Matrix.SetDiagonal)")
	}
	var err error
	if op.diag, err = op.refresh(op.diag, op.m.Diag, nil); err != nil {
		return fmt.Errorf("dsmat: refresh values: %w", err)
	}
	return op.RefreshOffDiagonal()
}

// RefreshOffDiagonal is Refresh for the off-diagonal blocks alone, for a
// matrix whose diagonal block gets its values on the backend (an FSAI
// factor updated on the device).
func (op *Operator) RefreshOffDiagonal() error {
	var err error
	if a, rowMap := op.m.offDiagonal(); a != nil {
		if op.offd, err = op.refresh(op.offd, a, rowMap); err != nil {
			return fmt.Errorf("dsmat: refresh values: %w", err)
		}
	}
	return nil
}

// refresh gives block the values of a, its host copy, and returns the block
// that now holds them.
func (op *Operator) refresh(block backend.Matrix, a *csr.Matrix[float64], rowMap []int32) (backend.Matrix, error) {
	if block.Precision() == backend.Double || op.storage(a.Val) == backend.Single {
		return block, op.be.SetValues(block, a.Val)
	}
	wide, err := op.be.NewMatrix(a, rowMap, backend.Double)
	if err != nil {
		return block, err
	}
	if err := op.be.Sync(); err != nil { // the products queued with the old block are done
		wide.Free()
		return block, err
	}
	block.Free()
	return wide, nil
}
