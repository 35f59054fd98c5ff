package dsmat

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// NewLocal builds this rank's part of a distributed matrix from its stripe
// held in a local column numbering: row i of a is the stripe's row i, and
// global[j] is the global index of local column j. Local order must be
// global order (global ascending), and the stripe's own rows must be
// consecutive local columns, as in a local system that holds the rank's rows
// with rows of other ranks around them (the FSAI set-up's). It is collective.
//
// NewLocal takes a's arrays: the diagonal block, most of the stripe, is cut
// out of them in place rather than copied, and only the off-rank entries are
// gathered apart, into the off-diagonal blocks. a must not be used after.
func NewLocal(c *comm.Comm, part Partition, a *csr.Matrix[float64], global []int64) (*Matrix, error) {
	return newLocal(c, part, a, nil, global, -1)
}

// NewLocalOffDiagonal is NewLocal for a stripe whose diagonal block a
// backend made and holds (FSAI's factor or SPAI's M set up on a GPU): a
// holds only the stripe's entries in other ranks' columns, and diagNNZ
// counts the diagonal block's. a's columns index held, the global indices
// of those columns, ascending, none in the stripe's own rows (an FSAI
// factor's lie below them, SPAI's on both sides). The own rows need no
// list, millions of entries long. The entries lie in a few of the
// stripe's rows: rows, when not nil, lists the rows that a holds (numbered
// from 0, ascending; a's row k is the stripe's row rows[k], the others are
// empty; an empty list, not nil, for none), so that no pass runs over
// millions of empty rows. The Matrix has no Diag: BindDiagonal binds it
// with the backend's block, and SetDiagonal gives it a host copy where one
// is needed (SetValues, Refresh, value slots). Collective.
func NewLocalOffDiagonal(c *comm.Comm, part Partition, a *csr.Matrix[float64], rows []int32, held []int64, diagNNZ int) (*Matrix, error) {
	return newLocal(c, part, a, rows, held, diagNNZ)
}

// newLocal is NewLocal, and with diagNNZ >= 0 NewLocalOffDiagonal (global
// is then its held columns).
func newLocal(c *comm.Comm, part Partition, a *csr.Matrix[float64], rows []int32, global []int64, diagNNZ int) (*Matrix, error) {
	offOnly := diagNNZ >= 0
	own, err := checkLocal(c, part, a, rows, global, offOnly)
	var counts localCounts
	nOwn := 0 // the stripe's rows, once the partition is checked
	if err == nil {
		nOwn = part.Size(c.Rank())
		cols := a.Cols // the columns entries may lie in: without the
		if offOnly {   // diagonal block, the held ones
			cols = own
		}
		counts, err = countLocal(a, own, nOwn, cols)
	}
	if err := c.Agree(err); err != nil {
		return nil, err
	}
	m, nnz := &Matrix{Comm: c, Part: part}, int64(a.NNZ())
	if off := m.cutLocal(a, rows, global, own, nOwn, counts, !offOnly); off != nil {
		m.Off = m.offBlocks(off)
	}
	if offOnly {
		nnz += int64(diagNNZ)
	}
	if err := m.finish(nnz); err != nil {
		return nil, err
	}
	return m, nil
}

// checkLocal checks the shape of a local stripe, its rows (nil: all) and
// its column numbering, and returns the local column of the stripe's first
// row. With offOnly, global lists the held columns only (NewLocalOffDiagonal).
func checkLocal(c *comm.Comm, part Partition, a *csr.Matrix[float64], rows []int32, global []int64, offOnly bool) (int, error) {
	if part.Ranks() != c.Size() {
		return 0, fmt.Errorf("dsmat: local stripe: partition of %d ranks on %d", part.Ranks(), c.Size())
	}
	lo, hi := part.Range(c.Rank())
	n := int(hi - lo)
	switch {
	case rows == nil && a.Rows != n:
		return 0, fmt.Errorf("dsmat: local stripe of %d rows, rank %d owns %d", a.Rows, c.Rank(), n)
	case rows != nil && len(rows) != a.Rows:
		return 0, fmt.Errorf("dsmat: local stripe of %d rows listed as %d", a.Rows, len(rows))
	}
	for k, r := range rows {
		if r < 0 || int(r) >= n || k > 0 && r <= rows[k-1] {
			return 0, fmt.Errorf("dsmat: local stripe's row %d is row %d: want rows 0 to %d, ascending", k, r, n-1)
		}
	}
	switch {
	case offOnly && len(global) > a.Cols:
		return 0, fmt.Errorf("dsmat: local stripe of %d columns with %d held columns", a.Cols, len(global))
	case !offOnly && len(global) != a.Cols:
		return 0, fmt.Errorf("dsmat: local stripe of %d columns with %d global indices", a.Cols, len(global))
	}
	if m := a.Rows; len(a.RowPtr) != m+1 || a.RowPtr[0] != 0 || int(a.RowPtr[m]) != len(a.ColIdx) || len(a.ColIdx) != len(a.Val) {
		return 0, fmt.Errorf("dsmat: local stripe's row pointers do not match %d columns and %d values", len(a.ColIdx), len(a.Val))
	}
	bad := make([]bool, parallel.Chunks(len(global)))
	parallel.For(len(global), func(c, lo, hi int) {
		for j := lo; j < hi; j++ {
			if global[j] < 0 || global[j] >= part.N() || j > 0 && global[j-1] >= global[j] {
				bad[c] = true
				return
			}
		}
	})
	if slices.Contains(bad, true) {
		return 0, fmt.Errorf("dsmat: local columns' global indices not ascending in [0,%d)", part.N())
	}
	if offOnly {
		if k, _ := slices.BinarySearch(global, lo); k < len(global) && global[k] < hi {
			return 0, fmt.Errorf("dsmat: held column %d in the stripe's rows [%d,%d)", global[k], lo, hi)
		}
		return len(global), nil
	}
	own, _ := slices.BinarySearch(global, lo)
	if n > 0 && (own+n > len(global) || global[own] != lo || global[own+n-1] != hi-1) {
		return 0, fmt.Errorf("dsmat: the stripe's rows [%d,%d) are not consecutive local columns", lo, hi)
	}
	return own, nil
}

// localCounts are, per chunk of the stripe's rows (parallel.For over them),
// the entries of the diagonal block and the rows and entries of the others.
type localCounts struct {
	diag []int
	off  offChunks
}

// countLocal counts the entries of a, whose stripe's nOwn rows are the
// local columns [own, own+nOwn), per chunk of rows, and checks that every
// row's columns are in [0, cols), sorted and unique.
func countLocal(a *csr.Matrix[float64], own, nOwn, cols int) (localCounts, error) {
	chunks := parallel.Chunks(a.Rows)
	n := localCounts{diag: make([]int, chunks), off: newOffChunks(a.Rows)}
	errs := make([]error, chunks)
	parallel.For(a.Rows, func(c, lo, hi int) {
		// counted here and stored once: chunks writing their counts next
		// to each other's at every row would share cache lines
		diag, offRows, off := 0, 0, 0
		defer func() { n.diag[c], n.off.rows[c], n.off.nnz[c] = diag, offRows, off }()
		for i := lo; i < hi; i++ {
			start, end := a.RowPtr[i], a.RowPtr[i+1]
			if start > end || end > int32(len(a.ColIdx)) {
				errs[c] = fmt.Errorf("dsmat: local stripe row %d: row pointers [%d,%d) out of order", i, start, end)
				return
			}
			d := 0
			for k := start; k < end; k++ {
				col := a.ColIdx[k]
				if col < 0 || int(col) >= cols || k > start && a.ColIdx[k-1] >= col {
					errs[c] = fmt.Errorf("dsmat: local stripe row %d: column %d out of range [0,%d) or not sorted and unique", i, col, cols)
					return
				}
				if int(col) >= own && int(col) < own+nOwn {
					d++
				}
			}
			diag += d
			if o := int(end-start) - d; o > 0 {
				offRows, off = offRows+1, off+o
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// cutLocal makes the diagonal block of m out of a's arrays in place, when
// diag is set (a holds no entries of it otherwise, and m gets none), and
// returns the other entries of a in global columns, nil when there are
// none; a's row k is the stripe's row rowMap[k] (nil: row k), and the
// stripe's nOwn rows are the local columns from own on.
//
// Every chunk of rows moves its diagonal entries, renumbered, to the start
// of its own range (a write never passes the read, so the chunk only
// overwrites entries it has read) and copies out its off-rank entries, on
// all cores; then the chunks' diagonal entries, in chunk order, slide left
// to where they belong, each onto entries already moved.
func (m *Matrix) cutLocal(a *csr.Matrix[float64], rowMap []int32, global []int64, own, nOwn int, n localCounts, diag bool) *offEntries {
	rows := a.Rows
	first := int32(own)
	off, rowAt, offAt := n.off.entries()
	if diag {
		m.Diag = &csr.Matrix[float64]{Rows: rows, Cols: rows, RowPtr: a.RowPtr, ColIdx: a.ColIdx, Val: a.Val}
	}
	if off == nil {
		if diag && first != 0 { // positions stay; only the columns shift
			parallel.For(len(a.ColIdx), func(_, lo, hi int) {
				for k := lo; k < hi; k++ {
					a.ColIdx[k] -= first
				}
			})
		}
		return nil
	}

	chunks := len(n.diag)
	diagAt := make([]int, chunks+1)
	for c := range chunks {
		diagAt[c+1] = diagAt[c] + n.diag[c]
	}
	var ptr []int32
	if diag {
		ptr = make([]int32, rows+1)
	}
	start := make([]int, chunks) // where each chunk's diagonal entries wait
	parallel.For(rows, func(c, lo, hi int) {
		start[c] = int(a.RowPtr[lo])
		w, d, r, o := start[c], diagAt[c], rowAt[c], offAt[c]
		for i := lo; i < hi; i++ {
			rowStart := o
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				col, val := a.ColIdx[k], a.Val[k]
				if col >= first && col < first+int32(nOwn) {
					a.ColIdx[w], a.Val[w] = col-first, val
					w++
					d++
				} else {
					off.col[o], off.val[o] = global[col], val
					o++
				}
			}
			if diag {
				ptr[i+1] = int32(d)
			}
			if o > rowStart {
				row := int32(i)
				if rowMap != nil {
					row = rowMap[i]
				}
				off.rows[r], off.ptr[r+1] = row, int64(o)
				r++
			}
		}
	})
	if diag {
		for c := range chunks {
			copy(a.ColIdx[diagAt[c]:diagAt[c+1]], a.ColIdx[start[c]:start[c]+n.diag[c]])
			copy(a.Val[diagAt[c]:diagAt[c+1]], a.Val[start[c]:start[c]+n.diag[c]])
		}
		m.Diag.RowPtr, m.Diag.ColIdx, m.Diag.Val = ptr, a.ColIdx[:diagAt[chunks]], a.Val[:diagAt[chunks]]
	}
	return off
}
