package cpu

// #cgo CFLAGS: -O3
// #include "spmv.h"
import "C"

import (
	"sort"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// spmv is SpMM of one column, which returns w'(A*x) over the rows it
// computes when w is not nil, summed in range order like dot. The rows are
// split into ranges of about equal numbers of entries, one per goroutine,
// and each range runs the C kernel (spmv.c), which gives spmvRows' bits.
func (b *Backend) spmv(y backend.Vector, a backend.Matrix, x backend.Vector, beta float64, w []float64) float64 {
	m, xv, yv := a.(*Matrix), x.(Vector), y.(Vector)
	rows := func(lo, hi int) float64 {
		if m.f32 != nil {
			return spmvFast(m.f32, m.rowMap, xv, beta, yv, w, lo, hi)
		}
		return spmvFast(m.f64, m.rowMap, xv, beta, yv, w, lo, hi)
	}
	bounds := b.splitEntries(m)
	if w == nil { // no partial sums to keep: the product allocates nothing
		parallelRanges(bounds, func(_, lo, hi int) { rows(lo, hi) })
		return 0
	}
	part := make([]float64, len(bounds)-1)
	parallelRanges(bounds, func(k, lo, hi int) { part[k] = rows(lo, hi) })
	var s float64
	for _, p := range part {
		s += p
	}
	return s
}

// splitEntries returns the bounds of contiguous row ranges of m with about
// equal numbers of entries, range k being rows [bounds[k], bounds[k+1]):
// as many ranges as b.chunks gives for m's entries, so that threads get
// equal work however the row lengths vary. The row pointers never change,
// m keeps them for the next product with as many ranges.
func (b *Backend) splitEntries(m *Matrix) []int {
	c := b.chunks(m.nnz)
	if len(m.bounds) == c+1 {
		return m.bounds
	}
	rowPtr := m.rowPtr()
	bounds := make([]int, c+1)
	bounds[c] = m.rows
	for k := 1; k < c; k++ {
		target := int32(k * m.nnz / c)
		bounds[k] = sort.Search(m.rows, func(i int) bool { return rowPtr[i] >= target })
	}
	m.bounds = bounds
	return bounds
}

// rowPtr returns the row pointers of whichever precision m is stored in.
func (m *Matrix) rowPtr() []int32 {
	if m.f32 != nil {
		return m.f32.RowPtr
	}
	return m.f64.RowPtr
}

// parallelRanges runs f over the ranges [bounds[k], bounds[k+1]), range k
// on its own goroutine.
func parallelRanges(bounds []int, f func(k, lo, hi int)) {
	fork(len(bounds)-1, func(k int) { f(k, bounds[k], bounds[k+1]) })
}

// spmvFast computes rows [lo, hi) of the product with the C kernel and
// returns w'(A*x) over them (0 when w is nil): spmvRows' result, bit for
// bit.
func spmvFast[T csr.Real](m *csr.Matrix[T], rowMap []int32, x []float64, beta float64, y, w []float64, lo, hi int) float64 {
	if lo >= hi {
		return 0
	}
	rp, col := (*C.int32_t)(&m.RowPtr[0]), (*C.int32_t)(unsafe.SliceData(m.ColIdx))
	rm, xp := (*C.int32_t)(unsafe.SliceData(rowMap)), (*C.double)(unsafe.SliceData(x))
	yp, wp := (*C.double)(&y[0]), (*C.double)(unsafe.SliceData(w))
	var dot C.double
	switch v := any(m.Val).(type) {
	case []float64:
		dot = C.fsai_spmv_f64(rp, col, (*C.double)(unsafe.SliceData(v)), rm, xp, C.double(beta), yp, wp, C.int64_t(lo), C.int64_t(hi))
	case []float32:
		dot = C.fsai_spmv_f32(rp, col, (*C.float)(unsafe.SliceData(v)), rm, xp, C.double(beta), yp, wp, C.int64_t(lo), C.int64_t(hi))
	}
	return float64(dot)
}

// spmvRows computes rows [lo, hi) of the product and returns w'(A*x) over
// them (0 when w is nil): the plain loop that the C kernel is tested
// against, bit for bit.
func spmvRows[T csr.Real](m *csr.Matrix[T], rowMap []int32, x []float64, beta float64, y, w []float64, lo, hi int) float64 {
	var dot float64
	for i := lo; i < hi; i++ {
		start, end := m.RowPtr[i], m.RowPtr[i+1]
		cols, vals := m.ColIdx[start:end], m.Val[start:end]
		vals = vals[:len(cols)] // lets the compiler drop the bounds check on vals
		var s float64
		for k, c := range cols {
			s += float64(vals[k]) * x[c]
		}
		out := i
		if rowMap != nil {
			out = int(rowMap[i])
		}
		if w != nil {
			dot += w[out] * s
		}
		if beta != 0 {
			s += beta * y[out]
		}
		y[out] = s
	}
	return dot
}
