// Package csr holds the compressed sparse row block that every other part of
// fsai-dist stores matrices in, and the serial reference kernels on it.
//
// Indices are int32 and local to the block: a distributed matrix is cut into
// blocks whose rows and columns are numbered from zero, so 4-byte indices hold
// however many global rows the whole system has (blueprint, section 4.1).
package csr

import (
	"fmt"
	"sort"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Real is the element type of matrix values: the set-up of FSAI may run in
// single precision while solves run in double.
type Real interface{ ~float32 | ~float64 }

// Matrix is a Rows x Cols sparse matrix in CSR form. Column indices within a
// row are sorted ascending and unique.
type Matrix[T Real] struct {
	Rows, Cols int
	RowPtr     []int32 // len Rows+1
	ColIdx     []int32 // len NNZ
	Val        []T     // len NNZ
}

// NNZ is the number of stored entries.
func (m *Matrix[T]) NNZ() int { return len(m.ColIdx) }

// Row returns the column indices and values of row i (views, not copies).
func (m *Matrix[T]) Row(i int) ([]int32, []T) {
	lo, hi := m.RowPtr[i], m.RowPtr[i+1]
	return m.ColIdx[lo:hi], m.Val[lo:hi]
}

// At returns entry (i, j), zero when it is not stored.
func (m *Matrix[T]) At(i, j int) T {
	cols, vals := m.Row(i)
	k := sort.Search(len(cols), func(k int) bool { return cols[k] >= int32(j) })
	if k < len(cols) && cols[k] == int32(j) {
		return vals[k]
	}
	return 0
}

// Check verifies the structural invariants: row pointers monotone and
// consistent, column indices in range, sorted and unique within each row.
func (m *Matrix[T]) Check() error {
	if len(m.RowPtr) != m.Rows+1 {
		return fmt.Errorf("csr: %d row pointers for %d rows", len(m.RowPtr), m.Rows)
	}
	if m.RowPtr[0] != 0 || int(m.RowPtr[m.Rows]) != len(m.ColIdx) || len(m.ColIdx) != len(m.Val) {
		return fmt.Errorf("csr: row pointers [%d..%d] do not match %d indices and %d values",
			m.RowPtr[0], m.RowPtr[m.Rows], len(m.ColIdx), len(m.Val))
	}
	for i := 0; i < m.Rows; i++ {
		if m.RowPtr[i] > m.RowPtr[i+1] {
			return fmt.Errorf("csr: row pointer decreases at row %d", i)
		}
		cols, _ := m.Row(i)
		for k, c := range cols {
			if c < 0 || int(c) >= m.Cols {
				return fmt.Errorf("csr: row %d: column %d out of range [0,%d)", i, c, m.Cols)
			}
			if k > 0 && cols[k-1] >= c {
				return fmt.Errorf("csr: row %d: columns not sorted and unique at %d", i, c)
			}
		}
	}
	return nil
}

// Entry is one coordinate-form entry, used to assemble a block.
type Entry[T Real] struct {
	Row, Col int32
	Val      T
}

// FromEntries assembles a rows x cols matrix from coordinate entries in any
// order. Duplicate entries are summed, in the order given, as Matrix Market
// and finite-element assembly expect. It runs in time linear in the number
// of entries for short rows: a counting sort by row, then a sort of each row
// by column, both on all cores. Every chunk of entries counts its rows and
// places them after the earlier chunks' entries of the same rows, so each
// row holds its entries in the order given, as a serial sort would.
func FromEntries[T Real](rows, cols int, entries []Entry[T]) *Matrix[T] {
	m := &Matrix[T]{Rows: rows, Cols: cols, RowPtr: make([]int32, rows+1),
		ColIdx: make([]int32, len(entries)), Val: make([]T, len(entries))}
	// next[c][i]: where chunk c places its next entry of row i
	next := make([][]int32, parallel.Chunks(len(entries)))
	parallel.For(len(entries), func(c, lo, hi int) {
		count := make([]int32, rows)
		for _, e := range entries[lo:hi] {
			count[e.Row]++
		}
		next[c] = count
	})
	parallel.For(rows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			var n int32
			for _, count := range next {
				count[i], n = n, n+count[i]
			}
			m.RowPtr[i+1] = n
		}
	})
	for i := 0; i < rows; i++ {
		m.RowPtr[i+1] += m.RowPtr[i]
	}
	parallel.For(len(entries), func(c, lo, hi int) {
		for _, e := range entries[lo:hi] {
			k := m.RowPtr[e.Row] + next[c][e.Row]
			m.ColIdx[k], m.Val[k] = e.Col, e.Val
			next[c][e.Row]++
		}
	})
	// sort each row by column, summing duplicates at the row's start
	length := make([]int32, rows)
	parallel.For(rows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			length[i] = sumRow(m.ColIdx[m.RowPtr[i]:m.RowPtr[i+1]], m.Val[m.RowPtr[i]:m.RowPtr[i+1]])
		}
	})
	nnz := int32(0)
	for _, n := range length {
		nnz += n
	}
	if int(nnz) == len(entries) {
		return m
	}
	// close the gaps the duplicates left, into new arrays
	ptr := make([]int32, rows+1)
	for i, n := range length {
		ptr[i+1] = ptr[i] + n
	}
	colIdx, val := make([]int32, nnz), make([]T, nnz)
	parallel.For(rows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			copy(colIdx[ptr[i]:ptr[i+1]], m.ColIdx[m.RowPtr[i]:])
			copy(val[ptr[i]:ptr[i+1]], m.Val[m.RowPtr[i]:])
		}
	})
	m.RowPtr, m.ColIdx, m.Val = ptr, colIdx, val
	return m
}

// sumRow sorts one row's entries by column, sums the duplicates in the
// order given into the first of each run, moves the sums to the front and
// returns how many there are.
func sumRow[T Real](cols []int32, vals []T) int32 {
	sortRow(cols, vals)
	w := 0
	for k := range cols {
		if k > 0 && cols[k] == cols[k-1] {
			vals[w-1] += vals[k]
			continue
		}
		cols[w], vals[w] = cols[k], vals[k]
		w++
	}
	return int32(w)
}

// sortRow sorts one row's entries by column, stably so that duplicates are
// summed in the order they were given: insertion sort for the short rows of
// sparse matrices, a merge sort beyond.
func sortRow[T Real](cols []int32, vals []T) {
	if len(cols) > 32 {
		sort.Stable(rowSorter[T]{cols, vals})
		return
	}
	for k := 1; k < len(cols); k++ {
		c, v := cols[k], vals[k]
		j := k
		for ; j > 0 && cols[j-1] > c; j-- {
			cols[j], vals[j] = cols[j-1], vals[j-1]
		}
		cols[j], vals[j] = c, v
	}
}

type rowSorter[T Real] struct {
	cols []int32
	vals []T
}

func (s rowSorter[T]) Len() int           { return len(s.cols) }
func (s rowSorter[T]) Less(a, b int) bool { return s.cols[a] < s.cols[b] }
func (s rowSorter[T]) Swap(a, b int) {
	s.cols[a], s.cols[b] = s.cols[b], s.cols[a]
	s.vals[a], s.vals[b] = s.vals[b], s.vals[a]
}

// Convert returns a copy of m with values of another precision: the
// single-precision FSAI set-up casts A down and G back up with it.
func Convert[D, S Real](m *Matrix[S]) *Matrix[D] {
	out := &Matrix[D]{Rows: m.Rows, Cols: m.Cols, RowPtr: m.RowPtr, ColIdx: m.ColIdx, Val: make([]D, len(m.Val))}
	parallel.For(len(m.Val), func(_, lo, hi int) {
		for k, v := range m.Val[lo:hi] {
			out.Val[lo+k] = D(v)
		}
	})
	return out
}

// Transpose returns m' in CSR form.
func Transpose[T Real](m *Matrix[T]) *Matrix[T] {
	t := &Matrix[T]{Rows: m.Cols, Cols: m.Rows, RowPtr: make([]int32, m.Cols+1),
		ColIdx: make([]int32, m.NNZ()), Val: make([]T, m.NNZ())}
	for _, c := range m.ColIdx {
		t.RowPtr[c+1]++
	}
	for i := 0; i < t.Rows; i++ {
		t.RowPtr[i+1] += t.RowPtr[i]
	}
	next := append([]int32(nil), t.RowPtr[:t.Rows]...)
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		for k, c := range cols {
			p := next[c]
			t.ColIdx[p] = int32(i)
			t.Val[p] = vals[k]
			next[c]++
		}
	}
	return t
}

// QuadDiag returns g_k' A g_k for every row k of g, in float64: the
// diagonal of G A G', which an exact FSAI factor makes 1 (on the rows of
// its pattern). A serial reference for tests.
func QuadDiag[T Real](a *Matrix[float64], g *Matrix[T]) []float64 {
	d := make([]float64, g.Rows)
	x := make([]float64, a.Cols)
	for k := range g.Rows {
		cols, vals := g.Row(k)
		for p, c := range cols {
			x[c] = float64(vals[p])
		}
		for p, c := range cols {
			rc, rv := a.Row(int(c))
			var s float64
			for q, cc := range rc {
				s += rv[q] * x[cc]
			}
			d[k] += float64(vals[p]) * s
		}
		for _, c := range cols {
			x[c] = 0
		}
	}
	return d
}

// MulVec computes y = m*x + beta*y serially. It is the reference every other
// SpMV kernel is tested against.
func MulVec[T Real](m *Matrix[T], x []float64, beta float64, y []float64) {
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		var s float64
		for k, c := range cols {
			s += float64(vals[k]) * x[c]
		}
		if beta == 0 {
			y[i] = s
		} else {
			y[i] = s + beta*y[i]
		}
	}
}
