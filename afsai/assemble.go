package afsai

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// assemble numbers the held rows in global order, before this rank's rows,
// and builds the local system's matrix: each held row's entries in the local
// system's columns, then this rank's rows, their entries in the held
// columns (from the left blocks) followed by the diagonal block. In single
// precision it stays in those two parts (Split), which a Device joins where
// it computes and the CPU joins when it needs the whole (matrix32); in
// double precision it is joined, or, without held rows, A's diagonal block
// itself, shared: the local system is read only. A rank that asked for
// nothing (ask false) assembles nothing and gets nil.
func (x *collection) assemble(ask bool) (*localSystem, error) {
	if !ask {
		return nil, nil
	}
	A, ls := x.A, x.ls
	nOwn, nRecv := A.LocalRows(), len(x.held)
	ls.held, ls.first, ls.nOwn = make([]int64, nRecv), A.First(), nOwn
	order := make([]int32, nRecv) // the held slot of each received local row
	x.number(order, ls.held)

	var received int64
	for _, msg := range x.msgs {
		received += msg.bytes()
	}
	switch {
	case x.single:
		ls.split = &Split{Border: assembleBorder[float32](x, order), Diag: A.Diag, Own: nRecv}
		if err := checkLocalEntries(ls.split.Border.NNZ(), A); err != nil {
			return nil, err
		}
	case nRecv == 0:
		ls.A = A.Diag
	default:
		border := assembleBorder[float64](x, order)
		if err := checkLocalEntries(border.NNZ(), A); err != nil {
			return nil, err
		}
		ls.A = join(border, A.Diag, nRecv)
	}
	rows, nnz := ls.size()
	valueBytes := int64(8)
	if x.single {
		valueBytes = 4
	}
	ls.assembledBytes = 4*int64(rows+1) + int64(nnz)*(4+valueBytes) // CSR in int32 and T
	ls.peakBytes = received + ls.assembledBytes
	return ls, nil
}

// maxLocalEntries bounds the entries of a rank's local system: its CSR
// row pointers are int32 (tests lower it).
var maxLocalEntries int64 = math.MaxInt32

// checkLocalEntries refuses a local system of A's diagonal block and a
// border of border entries that int32 row pointers cannot count: the
// stripe itself fits (dsmat checks), but the rows collected from the
// neighbours may take it past the bound.
func checkLocalEntries(border int, A *dsmat.Matrix) error {
	own := A.Diag.NNZ()
	if total := int64(border) + int64(own); total > maxLocalEntries {
		return fmt.Errorf("afsai: rank %d's local system holds %d entries (%d of its stripe's diagonal block, %d of the "+
			"border with its neighbours' rows), more than the %d its int32 row pointers count: use more ranks",
			A.Comm.Rank(), total, own, border, maxLocalEntries)
	}
	return nil
}

// number gives the held rows local indices from 0 on, source by source and
// in stripe order within each, in place of their slots in ls.index (one
// more than the local index there); it records each one's slot in order
// and global index in global. It costs what the held rows are, not what
// the sources' stripes are, on all cores: the slots are bucketed by source
// (counted, then placed, per chunk of slots), and sorted only where the
// rounds of the collection delivered them out of order.
func (x *collection) number(order []int32, global []int64) {
	ls, ns := x.ls, len(x.sources)
	counts := make([][]int, parallel.Chunks(len(x.held))) // per chunk, its slots of each source
	parallel.For(len(x.held), func(c, lo, hi int) {
		n := make([]int, ns)
		for _, h := range x.held[lo:hi] {
			n[h.src]++
		}
		counts[c] = n
	})
	start := make([]int, ns+1) // source k's rows are order[start[k]:start[k+1]]
	for k := range ns {
		start[k+1] = start[k]
		for _, n := range counts {
			at := start[k+1]
			start[k+1] += n[k]
			n[k] = at // now where the chunk's slots of source k go
		}
	}
	parallel.For(len(x.held), func(c, lo, hi int) {
		next := counts[c]
		for s := lo; s < hi; s++ {
			k := x.held[s].src
			order[next[k]] = int32(s)
			next[k]++
		}
	})
	byRow := func(a, b int32) int { return cmp.Compare(x.held[a].row, x.held[b].row) }
	for k, q := range x.sources {
		slots := order[start[k]:start[k+1]]
		if !sortedBy(slots, byRow) {
			slices.SortFunc(slots, byRow)
		}
		lo, _ := ls.part.Range(q)
		idx := ls.index[k]
		parallel.For(len(slots), func(_, a, b int) {
			for j := a; j < b; j++ {
				l, row := start[k]+j, x.held[slots[j]].row
				global[l], idx[row] = lo+int64(row), int32(l)+1
			}
		})
	}
}

// sortedBy reports whether xs is sorted by cmp, checked on all cores.
func sortedBy(xs []int32, cmp func(a, b int32) int) bool {
	bad := make([]bool, parallel.Chunks(len(xs)))
	parallel.For(len(xs), func(c, lo, hi int) {
		for j := max(lo, 1); j < hi; j++ {
			if cmp(xs[j-1], xs[j]) > 0 {
				bad[c] = true
				return
			}
		}
	})
	return !slices.Contains(bad, true)
}

// assembleBorder builds the border of the local system (Split), its values
// rounded to T, once the rows are numbered; order is the held slot of each
// received row. The border ends after the last own row that a left block
// stores: on diffusion:200's second of two stripes, 240,000 of its 4.2M
// rows. Every chunk of rows counts, then copies, its entries on its own
// core; the held rows' columns are turned into local indices (-1 outside
// the local system) in place as they are counted. It marks in
// ls.incomplete the received rows that lose entries in columns of the
// set's ranks.
func assembleBorder[T csr.Real](x *collection, order []int32) *csr.Matrix[T] {
	A, ls := x.A, x.ls
	nOwn, nRecv := A.LocalRows(), len(order)
	m := nRecv + nOwn
	var left []*dsmat.Block // the left blocks of the set, with their columns' local indices
	var leftCols [][]int32
	for k := range A.Off {
		b := &A.Off[k]
		if _, in := slices.BinarySearch(ls.set, b.Rank); in && b.Rank < A.Comm.Rank() {
			lc := make([]int32, len(b.Cols))
			for j, gi := range b.Cols {
				lc[j] = ls.local(gi)
			}
			left, leftCols = append(left, b), append(leftCols, lc)
		}
	}
	rows := nRecv // the border's: up to the last own row a left block stores
	if nRecv > 0 {
		for _, b := range left {
			if k := len(b.Rows); k > 0 {
				rows = max(rows, nRecv+int(b.Rows[k-1])+1)
			}
		}
	}
	out := &csr.Matrix[T]{Rows: rows, Cols: m, RowPtr: make([]int32, rows+1)}
	if nRecv == 0 {
		return out // no held columns: the own rows have no entries in them
	}
	incomplete := make([]bool, nRecv)
	parallel.For(nRecv, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			cols, _ := x.row(order[j])
			n := int32(0)
			for e, gi := range cols {
				l, inSet := ls.lookup(gi)
				if l >= 0 {
					n++
				} else if inSet {
					incomplete[j] = true
				}
				cols[e] = int64(l)
			}
			out.RowPtr[j+1] = n
		}
	})
	if slices.Contains(incomplete, true) {
		ls.incomplete = incomplete
	}
	// own rows hold entries in the held columns only where a left block
	// stores the row; a block stores a row once, so its rows are counted
	// and copied on all cores, block after block
	for k, b := range left {
		parallel.For(len(b.Rows), func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				cols, _ := b.A.Row(r)
				for _, c := range cols {
					if leftCols[k][c] >= 0 {
						out.RowPtr[nRecv+int(b.Rows[r])+1]++
					}
				}
			}
		})
	}
	parallel.Accumulate(out.RowPtr)
	out.ColIdx, out.Val = make([]int32, out.RowPtr[rows]), make([]T, out.RowPtr[rows])
	parallel.For(nRecv, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			at := out.RowPtr[j]
			cols, vals := x.row(order[j])
			for e, l := range cols {
				if l >= 0 {
					out.ColIdx[at], out.Val[at] = int32(l), T(vals[e])
					at++
				}
			}
		}
	})
	// each own row's next free entry: its start with one left block, else
	// a copy of the starts that the blocks move on
	next := out.RowPtr[nRecv:rows]
	if len(left) > 1 {
		next = slices.Clone(next)
	}
	for k, b := range left {
		parallel.For(len(b.Rows), func(_, lo, hi int) {
			for r := lo; r < hi; r++ {
				i := b.Rows[r]
				at := next[i]
				cols, vals := b.A.Row(r)
				for j, c := range cols {
					if l := leftCols[k][c]; l >= 0 {
						out.ColIdx[at], out.Val[at] = l, T(vals[j])
						at++
					}
				}
				if len(left) > 1 {
					next[i] = at
				}
			}
		})
	}
	return out
}
