package afsai

import (
	"slices"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// assemble numbers the held rows in global order, before this rank's rows,
// and builds the local system's matrix: each held row's entries in the local
// system's columns, then this rank's rows, their entries in the held
// columns (from the left blocks) followed by the diagonal block. Without
// held rows it is A's diagonal block itself, shared: the local system is
// read only. A rank that asked for nothing (ask false) assembles nothing
// and gets nil.
func (x *collection) assemble(ask bool) *localSystem {
	if !ask {
		return nil
	}
	A, ls := x.A, x.ls
	nOwn, nRecv := A.LocalRows(), len(x.held)
	m := nRecv + nOwn
	ls.global, ls.own = make([]int64, m), make([]int, nOwn)
	order := make([]int32, nRecv) // the held slot of each received local row
	base := 0
	for k, q := range x.sources {
		lo, _ := A.Part.Range(q)
		base = number(ls.index[k], lo, base, order, ls.global)
	}
	own := make([]int32, nOwn)
	parallel.For(nOwn, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			own[i], ls.global[nRecv+i], ls.own[i] = int32(nRecv+i), A.First()+int64(i), nRecv+i
		}
	})
	ls.index[len(x.sources)] = own

	var received int64
	for _, msg := range x.msgs {
		received += msg.bytes()
	}
	switch {
	case x.single && nRecv == 0:
		ls.A32 = csr.Convert[float32](A.Diag)
	case x.single:
		ls.A32 = assembleMatrix[float32](x, order)
	case nRecv == 0:
		ls.A = A.Diag
	default:
		ls.A = assembleMatrix[float64](x, order)
	}
	if x.single {
		ls.assembledBytes = csrBytes(ls.A32)
	} else {
		ls.assembledBytes = csrBytes(ls.A)
	}
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

// assembleMatrix builds the local system's matrix, its values rounded to
// T, once the rows are numbered; order is the held slot of each received
// row. Every chunk of rows counts,
// then copies, its entries on its own core; the held rows' columns are
// turned into local indices (-1 outside the local system) in place as they
// are counted. It marks in ls.incomplete the received rows that lose
// entries in columns of the set's ranks.
func assembleMatrix[T csr.Real](x *collection, order []int32) *csr.Matrix[T] {
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
	parallel.For(nOwn, func(_, lo, hi int) {
		cur := newCursors(left, lo)
		for i := lo; i < hi; i++ {
			n := A.Diag.RowPtr[i+1] - A.Diag.RowPtr[i]
			for k := range left {
				cols, _ := cur.row(k, i)
				for _, c := range cols {
					if leftCols[k][c] >= 0 {
						n++
					}
				}
			}
			out.RowPtr[nRecv+i+1] = n
		}
	})
	for i := range m {
		out.RowPtr[i+1] += out.RowPtr[i]
	}
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
	parallel.For(nOwn, func(_, lo, hi int) {
		cur := newCursors(left, lo)
		for i := lo; i < hi; i++ {
			at := out.RowPtr[nRecv+i]
			for k := range left {
				cols, vals := cur.row(k, i)
				for j, c := range cols {
					if l := leftCols[k][c]; l >= 0 {
						out.ColIdx[at], out.Val[at] = l, T(vals[j])
						at++
					}
				}
			}
			cols, vals := A.Diag.Row(i)
			for j, c := range cols {
				out.ColIdx[at], out.Val[at] = c+int32(nRecv), T(vals[j])
				at++
			}
		}
	})
	return out
}

// csrBytes is the memory of a CSR block.
func csrBytes[T csr.Real](a *csr.Matrix[T]) int64 {
	var v T
	return 4*int64(len(a.RowPtr)) + (4+int64(unsafe.Sizeof(v)))*int64(a.NNZ())
}
