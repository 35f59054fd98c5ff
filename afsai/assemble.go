package afsai

import (
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
func (x *collection) assemble(ask bool) *localSystem {
	if !ask {
		return nil
	}
	A, ls := x.A, x.ls
	nOwn, nRecv := A.LocalRows(), len(x.held)
	m := nRecv + nOwn
	ls.global, ls.nOwn = make([]int64, m), nOwn
	order := make([]int32, nRecv) // the held slot of each received local row
	base := 0
	for k, q := range x.sources {
		lo, _ := A.Part.Range(q)
		base = number(ls.index[k], lo, base, order, ls.global)
	}
	own := make([]int32, nOwn)
	parallel.For(nOwn, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			own[i], ls.global[nRecv+i] = int32(nRecv+i), A.First()+int64(i)
		}
	})
	ls.index[len(x.sources)] = own

	var received int64
	for _, msg := range x.msgs {
		received += msg.bytes()
	}
	switch {
	case x.single:
		ls.split = &Split{Border: assembleBorder[float32](x, order), Diag: A.Diag, Own: nRecv}
	case nRecv == 0:
		ls.A = A.Diag
	default:
		ls.A = join(assembleBorder[float64](x, order), A.Diag, nRecv)
	}
	rows, nnz := ls.size()
	valueBytes := int64(8)
	if x.single {
		valueBytes = 4
	}
	ls.assembledBytes = 4*int64(rows+1) + int64(nnz)*(4+valueBytes) // CSR in int32 and T
	ls.peakBytes = received + ls.assembledBytes
	return ls
}

// number gives the held rows of a stripe whose first row is lo local
// indices from base on, in stripe order, in place of their slots in idx
// (-1 for the others); it records each one's slot in order and global index
// in global. It returns the next free local index. Every chunk of the stripe
// counts its held rows, then numbers them, on its own core.
func number(idx []int32, lo int64, base int, order []int32, global []int64) int {
	k := parallel.Chunks(len(idx))
	start := make([]int, k+1) // chunk c numbers from start[c]
	start[0] = base
	parallel.For(len(idx), func(c, a, b int) {
		for _, s := range idx[a:b] {
			if s >= 0 {
				start[c+1]++
			}
		}
	})
	for c := range k {
		start[c+1] += start[c]
	}
	parallel.For(len(idx), func(c, a, b int) {
		l := start[c]
		for i := a; i < b; i++ {
			if s := idx[i]; s >= 0 {
				order[l], global[l], idx[i] = s, lo+int64(i), int32(l)
				l++
			} else {
				idx[i] = -1
			}
		}
	})
	return start[k]
}

// assembleBorder builds the border of the local system (Split), its values
// rounded to T, once the rows are numbered; order is the held slot of each
// received row. Every chunk of rows counts, then copies, its entries on its
// own core; the held rows' columns are turned into local indices (-1
// outside the local system) in place as they are counted. It marks in
// ls.incomplete the received rows that lose entries in columns of the set's
// ranks.
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
	out := &csr.Matrix[T]{Rows: m, Cols: m, RowPtr: make([]int32, m+1)}
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
	// stores the row
	for k, b := range left {
		for r, i := range b.Rows {
			cols, _ := b.A.Row(r)
			for _, c := range cols {
				if leftCols[k][c] >= 0 {
					out.RowPtr[nRecv+int(i)+1]++
				}
			}
		}
	}
	parallel.Accumulate(out.RowPtr)
	out.ColIdx, out.Val = make([]int32, out.RowPtr[m]), make([]T, out.RowPtr[m])
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
	next := slices.Clone(out.RowPtr[nRecv:m]) // each own row's next free entry
	for k, b := range left {
		for r, i := range b.Rows {
			cols, vals := b.A.Row(r)
			for j, c := range cols {
				if l := leftCols[k][c]; l >= 0 {
					at := next[i]
					out.ColIdx[at], out.Val[at] = l, T(vals[j])
					next[i]++
				}
			}
		}
	}
	return out
}
