package cpu

import (
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// Block kernels (several right-hand sides): an n x k block is a Vector of n*k
// entries, entry (i, c) at i*k+c. Element-wise kernels and reductions split
// the entries, not the rows, over the goroutines, like their one-column
// counterparts; a range that starts inside a row starts at column lo%k. With
// k = 1 every kernel adds in the order of its one-column counterpart, so it
// returns the same bits.

// SpMM computes Y = A*X + beta*Y for blocks of k columns, reading each row of
// A once for all k columns.
func (b *Backend) SpMM(y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64) {
	m, xv, yv := a.(*Matrix), x.(Vector), y.(Vector)
	if m.f32 != nil {
		b.parallel(m.rows, func(_, lo, hi int) { spmmRows(m.f32, m.rowMap, xv, k, beta, yv, lo, hi) })
		return
	}
	b.parallel(m.rows, func(_, lo, hi int) { spmmRows(m.f64, m.rowMap, xv, k, beta, yv, lo, hi) })
}

// spmmRows is spmvRows for blocks of k columns: row i's k sums are
// accumulated in s in the order of the row's entries, then written to row i
// (or rowMap[i]) of y.
func spmmRows[T csr.Real](m *csr.Matrix[T], rowMap []int32, x []float64, k int, beta float64, y []float64, lo, hi int) {
	s := make([]float64, k)
	for i := lo; i < hi; i++ {
		clear(s)
		start, end := m.RowPtr[i], m.RowPtr[i+1]
		cols, vals := m.ColIdx[start:end], m.Val[start:end]
		vals = vals[:len(cols)]
		for e, j := range cols {
			v, xj := float64(vals[e]), x[int(j)*k:int(j)*k+k]
			for c, xc := range xj {
				s[c] += v * xc
			}
		}
		out := i
		if rowMap != nil {
			out = int(rowMap[i])
		}
		yi := y[out*k : out*k+k]
		for c, v := range s {
			if beta != 0 {
				v += beta * yi[c]
			}
			yi[c] = v
		}
	}
}

// DotCols sets out[c] to the dot product of columns c of x and y.
func (b *Backend) DotCols(x, y backend.Vector, out []float64) {
	xv, yv, k := x.(Vector), y.(Vector), len(out)
	b.sumCols(len(xv), out, func(lo, hi int, s []float64) {
		for i, c := lo, lo%k; i < hi; i++ {
			s[c] += xv[i] * yv[i]
			if c++; c == k {
				c = 0
			}
		}
	})
}

// AxpbyCols computes y[:,c] = a[c]*x[:,c] + b[c]*y[:,c]; a column with
// b[c] == 0 does not read y (it may hold NaN), as in BLAS.
func (b *Backend) AxpbyCols(y backend.Vector, a []float64, x backend.Vector, beta []float64) {
	yv, xv, k := y.(Vector), x.(Vector), len(a)
	b.parallel(len(yv), func(_, lo, hi int) {
		for i, c := lo, lo%k; i < hi; i++ {
			if beta[c] == 0 {
				yv[i] = a[c] * xv[i]
			} else {
				yv[i] = a[c]*xv[i] + beta[c]*yv[i]
			}
			if c++; c == k {
				c = 0
			}
		}
	})
}

// MulCols computes z[i,c] = d[i]*r[i,c].
func (b *Backend) MulCols(z, d, r backend.Vector, k int) {
	zv, dv, rv := z.(Vector), d.(Vector), r.(Vector)
	b.parallel(len(zv), func(_, lo, hi int) {
		for e, i, c := lo, lo/k, lo%k; e < hi; e++ {
			zv[e] = dv[i] * rv[e]
			if c++; c == k {
				i, c = i+1, 0
			}
		}
	})
}

// UpdateXRCols computes x[:,c] += a[c]*p[:,c], r[:,c] -= a[c]*q[:,c] and sets
// rr[c] to the new r'r of column c.
func (b *Backend) UpdateXRCols(x, r backend.Vector, a []float64, p, q backend.Vector, rr []float64) {
	xv, rv, pv, qv, k := x.(Vector), r.(Vector), p.(Vector), q.(Vector), len(a)
	b.sumCols(len(xv), rr, func(lo, hi int, s []float64) {
		for i, c := lo, lo%k; i < hi; i++ {
			xv[i] += a[c] * pv[i]
			rv[i] -= a[c] * qv[i]
			s[c] += rv[i] * rv[i]
			if c++; c == k {
				c = 0
			}
		}
	})
}

// UpdateXRZCols is UpdateXRCols fused with z[i,c] = d[i]*r[i,c]; it also
// sets rz[c] to the new r'z of column c.
func (b *Backend) UpdateXRZCols(x, r backend.Vector, a []float64, p, q, d, z backend.Vector, rr, rz []float64) {
	xv, rv, pv, qv, dv, zv, k := x.(Vector), r.(Vector), p.(Vector), q.(Vector), d.(Vector), z.(Vector), len(a)
	sums := make([]float64, 2*k) // rr then rz
	b.sumCols(len(xv), sums, func(lo, hi int, s []float64) {
		for e, i, c := lo, lo/k, lo%k; e < hi; e++ {
			xv[e] += a[c] * pv[e]
			rv[e] -= a[c] * qv[e]
			zv[e] = dv[i] * rv[e]
			s[c] += rv[e] * rv[e]
			s[k+c] += rv[e] * zv[e]
			if c++; c == k {
				i, c = i+1, 0
			}
		}
	})
	copy(rr, sums[:k])
	copy(rz, sums[k:])
}

// sumCols is sum for len(out) sums at once: f adds the sums of its range of
// [0,n) into s, zeros of its own (no two goroutines share a cache line), and
// the ranges' sums are added into out in range order, so out depends only on
// n and the thread count.
func (b *Backend) sumCols(n int, out []float64, f func(lo, hi int, s []float64)) {
	w := len(out)
	part := make([]float64, b.chunks(n)*w)
	b.parallel(n, func(k, lo, hi int) {
		s := make([]float64, w)
		f(lo, hi, s)
		copy(part[k*w:], s)
	})
	clear(out)
	for k := 0; k < len(part); k += w {
		for c := range out {
			out[c] += part[k+c]
		}
	}
}
