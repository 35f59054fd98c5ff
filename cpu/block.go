package cpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// Block kernels (several right-hand sides): an n x k block is a Vector of n*k
// entries, entry (i, c) at i*k+c. They split the rows over the goroutines and
// loop over a row's k entries innermost, on slices of length k (which lets
// the compiler drop the bounds checks). With k = 1 they run one-column
// loops (spmv, dot, axpby, mul: a slice of one entry per row cost
// PCG-Jacobi a fifth of its iteration on poisson7:128), over the same
// ranges and adding in the same order as the block loops would: the same
// bits.

// SpMM computes Y = A*X + beta*Y for blocks of k columns, reading each row of
// A once for all k columns.
func (b *Backend) SpMM(y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64) {
	if !b.checkProduct("SpMM", y, a, x, k, beta) {
		return
	}
	if k == 1 {
		b.spmv(y, a, x, beta, nil)
		return
	}
	b.parallel(a.Rows(), func(_, lo, hi int) { b.spmmRows(y, a, x, k, beta, nil, nil, lo, hi) })
}

// SpMMDot is SpMM that adds w[:,c]'(A*X)[:,c] over the rows it computes to
// sum c of s, summed in range order like DotCols.
func (b *Backend) SpMMDot(y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64, w backend.Vector, s backend.Sum) {
	if !b.checkProduct("SpMMDot", y, a, x, k, beta) {
		return
	}
	if w.Len() != y.Len() {
		b.fail(fmt.Errorf("cpu: SpMMDot: w of %d for y of %d", w.Len(), y.Len()))
		return
	}
	sum := s.(*Sum)
	if k == 1 {
		sum.v[0] += b.spmv(y, a, x, beta, w.(Vector))
		return
	}
	dots := make([]float64, k)
	b.sumRows(a.Rows(), dots, func(lo, hi int, part []float64) { b.spmmRows(y, a, x, k, beta, w.(Vector), part, lo, hi) })
	for c, d := range dots {
		sum.v[c] += d
	}
}

// spmmRows computes rows [lo, hi) of SpMM, adding w's dot products with
// them to dots when w is not nil.
func (b *Backend) spmmRows(y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64, w, dots []float64, lo, hi int) {
	m, xv, yv := a.(*Matrix), x.(Vector), y.(Vector)
	if m.f32 != nil {
		spmmRows(m.f32, m.rowMap, xv, k, beta, yv, w, dots, lo, hi)
		return
	}
	spmmRows(m.f64, m.rowMap, xv, k, beta, yv, w, dots, lo, hi)
}

// spmmRows is spmvRows for blocks of k columns: each of row i's k sums is
// accumulated in the order of the row's entries, then written to row i (or
// rowMap[i]) of y, and its product with w's entry added to dots when w is
// not nil. Columns go four at a time with the sums in registers; the row's
// entries, read once per group, stay in the L1 cache.
func spmmRows[T csr.Real](m *csr.Matrix[T], rowMap []int32, x []float64, k int, beta float64, y, w, dots []float64, lo, hi int) {
	for i := lo; i < hi; i++ {
		start, end := m.RowPtr[i], m.RowPtr[i+1]
		cols, vals := m.ColIdx[start:end], m.Val[start:end]
		vals = vals[:len(cols)]
		out := i
		if rowMap != nil {
			out = int(rowMap[i])
		}
		yi := y[out*k : out*k+k]
		var wi []float64 // nil: no dot products
		if w != nil {
			wi = w[out*k : out*k+k]
		}
		c := 0
		for ; c+4 <= k; c += 4 {
			var s0, s1, s2, s3 float64
			for e, j := range cols {
				v, xj := float64(vals[e]), x[int(j)*k+c:int(j)*k+c+4]
				s0 += v * xj[0]
				s1 += v * xj[1]
				s2 += v * xj[2]
				s3 += v * xj[3]
			}
			store(yi[c:c+4], wi, dots, c, beta, s0, s1, s2, s3)
		}
		for ; c < k; c++ {
			var s0 float64
			for e, j := range cols {
				s0 += float64(vals[e]) * x[int(j)*k+c]
			}
			store(yi[c:c+1], wi, dots, c, beta, s0)
		}
	}
}

// store sets y[j] = s[j] + beta*y[j], reading y only when beta != 0, for
// the sums s of columns c, c+1, ...; with the row's w (wi, not nil), it
// adds wi[c+j]*s[j] to dots[c+j].
func store(y, wi, dots []float64, c int, beta float64, s ...float64) {
	for j, v := range s {
		if wi != nil {
			dots[c+j] += wi[c+j] * v
		}
		if beta != 0 {
			v += beta * y[j]
		}
		y[j] = v
	}
}

// DotCols sets out[c] to the dot product of columns c of x and y.
func (b *Backend) DotCols(x, y backend.Vector, out []float64) {
	xv, yv, k := x.(Vector), y.(Vector), len(out)
	if k == 1 {
		out[0] = b.dot(xv, yv)
		return
	}
	b.sumRows(len(xv)/k, out, func(lo, hi int, s []float64) {
		for i := lo; i < hi; i++ {
			xi := xv[i*k : i*k+k]
			yi, s := yv[i*k : i*k+k][:len(xi)], s[:len(xi)]
			for c, v := range xi {
				s[c] += v * yi[c]
			}
		}
	})
}

// DotMany sets out[c] to the dot product of w with the c-th vector of
// w's length in v (the C kernel fsai_dot_many: four vectors at a time
// over the whole range, each with four partial sums), the ranges' sums
// added in range order.
func (b *Backend) DotMany(v, w backend.Vector, out []float64) {
	vv, wv, k := v.(Vector), w.(Vector), len(out)
	n := len(wv)
	if !b.holds("DotMany", vv, k, n) {
		return
	}
	b.sumRows(n, out, func(lo, hi int, s []float64) { dotMany(s, wv, vv, lo, hi) })
}

// AxpyMany computes w += sum_c a[c]*v_c over the c-th vectors of w's
// length in v, adding the terms of each entry in the order of c (the C
// kernel fsai_axpy_many: four vectors at a time over the whole range).
func (b *Backend) AxpyMany(w, v backend.Vector, a []float64) {
	wv, vv := w.(Vector), v.(Vector)
	n := len(wv)
	if !b.holds("AxpyMany", vv, len(a), n) {
		return
	}
	b.parallel(n, func(_, lo, hi int) { axpyMany(wv, vv, a, lo, hi) })
}

// AxpyDotMany is AxpyMany, then out[c] = v_c'w and out[len(a)] = w'w with
// the updated w, on tiles of dotTile entries (the C kernel
// fsai_axpy_dot_many): a tile of w is updated from the vectors' stretches,
// which then are still in the cache for the dots, so each vector comes
// from memory once. Each range's sums add the tiles' in order, and the
// ranges' in range order.
func (b *Backend) AxpyDotMany(w, v backend.Vector, a, out []float64) {
	wv, vv, k := w.(Vector), v.(Vector), len(a)
	n := len(wv)
	if len(out) != k+1 {
		b.fail(fmt.Errorf("cpu: AxpyDotMany: %d sums for %d vectors", len(out), k))
		return
	}
	if !b.holds("AxpyDotMany", vv, k, n) {
		return
	}
	b.sumRows(n, out, func(lo, hi int, s []float64) { axpyDotMany(s, wv, vv, a, lo, hi) })
}

// holds reports whether v holds k vectors of n entries, recording an
// error of op when it does not.
func (b *Backend) holds(op string, v Vector, k, n int) bool {
	if len(v) < k*n {
		b.fail(fmt.Errorf("cpu: %s: %d vectors of %d entries in %d", op, k, n, len(v)))
		return false
	}
	return true
}

// DotPairCols sets xy[c] = x[:,c]'y[:,c] and xz[c] = x[:,c]'z[:,c].
func (b *Backend) DotPairCols(x, y, z backend.Vector, xy, xz []float64) {
	xv, yv, zv, k := x.(Vector), y.(Vector), z.(Vector), len(xy)
	sums := make([]float64, 2*k) // xy then xz
	if k == 1 {
		b.sumRows(len(xv), sums, func(lo, hi int, s []float64) {
			x := xv[lo:hi]
			y, z := yv[lo:hi][:len(x)], zv[lo:hi][:len(x)]
			var sy, sz float64
			for i, v := range x {
				sy += v * y[i]
				sz += v * z[i]
			}
			s[0], s[1] = sy, sz
		})
		xy[0], xz[0] = sums[0], sums[1]
		return
	}
	b.sumRows(len(xv)/k, sums, func(lo, hi int, s []float64) {
		for i := lo; i < hi; i++ {
			xi := xv[i*k : i*k+k]
			yi, zi := yv[i*k : i*k+k][:len(xi)], zv[i*k : i*k+k][:len(xi)]
			sy, sz := s[:len(xi)], s[k:k+len(xi)]
			for c, v := range xi {
				sy[c] += v * yi[c]
				sz[c] += v * zi[c]
			}
		}
	})
	copy(xy, sums[:k])
	copy(xz, sums[k:])
}

// AxpbyCols computes y[:,c] = a[c]*x[:,c] + b[c]*y[:,c]; a column with
// b[c] == 0 does not read y (it may hold NaN), as in BLAS.
func (b *Backend) AxpbyCols(y backend.Vector, a []float64, x backend.Vector, beta []float64) {
	yv, xv, k := y.(Vector), x.(Vector), len(a)
	if k == 1 {
		b.axpby(yv, a[0], xv, beta[0])
		return
	}
	b.parallel(len(yv)/k, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			yi := yv[i*k : i*k+k]
			xi, a, beta := xv[i*k : i*k+k][:len(yi)], a[:len(yi)], beta[:len(yi)]
			for c := range yi {
				if beta[c] == 0 {
					yi[c] = a[c] * xi[c]
				} else {
					yi[c] = a[c]*xi[c] + beta[c]*yi[c]
				}
			}
		}
	})
}

// MulCols computes z[i,c] = d[i]*r[i,c].
func (b *Backend) MulCols(z, d, r backend.Vector, k int) {
	zv, dv, rv := z.(Vector), d.(Vector), r.(Vector)
	if k == 1 {
		b.mul(zv, dv, rv)
		return
	}
	b.parallel(len(zv)/k, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			zi := zv[i*k : i*k+k]
			ri, di := rv[i*k : i*k+k][:len(zi)], dv[i]
			for c := range zi {
				zi[c] = di * ri[c]
			}
		}
	})
}

// UpdateRZCols is r[:,c] -= a[c]*q[:,c], with rr[c] and rz[c] the r'r and
// r'(d .* r) of column c after it.
func (b *Backend) UpdateRZCols(r backend.Vector, a []float64, q, d backend.Vector, rr, rz []float64) {
	rv, qv, dv, k := r.(Vector), q.(Vector), d.(Vector), len(a)
	sums := make([]float64, 2*k) // rr then rz
	if k == 1 {
		ac := a[0]
		b.sumRows(len(rv), sums, func(lo, hi int, s []float64) {
			r := rv[lo:hi]
			q, d := qv[lo:hi][:len(r)], dv[lo:hi][:len(r)]
			var srr, srz float64
			for i := range r {
				rc := r[i] - ac*q[i]
				r[i] = rc
				srr += rc * rc
				srz += d[i] * (rc * rc)
			}
			s[0], s[1] = srr, srz
		})
		rr[0], rz[0] = sums[0], sums[1]
		return
	}
	b.sumRows(len(rv)/k, sums, func(lo, hi int, s []float64) {
		srr, srz := s[:k], s[k:]
		for i := lo; i < hi; i++ {
			ri := rv[i*k : i*k+k]
			qi, a, srr, srz, di := qv[i*k : i*k+k][:len(ri)], a[:len(ri)], srr[:len(ri)], srz[:len(ri)], dv[i]
			for c := range ri {
				rc := ri[c] - a[c]*qi[c]
				ri[c] = rc
				srr[c] += rc * rc
				srz[c] += di * (rc * rc)
			}
		}
	})
	copy(rr, sums[:k])
	copy(rz, sums[k:])
}

// UpdateXPCols is x[:,c] += a[c]*p[:,c], then p[:,c] = z[:,c] +
// b[c]*p[:,c] with z = d .* r, or z = r when d is nil.
func (b *Backend) UpdateXPCols(x backend.Vector, a []float64, p, d, r backend.Vector, beta []float64) {
	xv, pv, rv, k := x.(Vector), p.(Vector), r.(Vector), len(a)
	var dv Vector
	if d != nil {
		dv = d.(Vector)
	}
	if k == 1 {
		ac, bc := a[0], beta[0]
		b.parallel(len(xv), func(_, lo, hi int) {
			x := xv[lo:hi]
			p, r := pv[lo:hi][:len(x)], rv[lo:hi][:len(x)]
			if dv == nil {
				for i, p0 := range p {
					x[i] += ac * p0
					p[i] = r[i] + bc*p0
				}
				return
			}
			d := dv[lo:hi][:len(x)]
			for i, p0 := range p {
				x[i] += ac * p0
				p[i] = d[i]*r[i] + bc*p0
			}
		})
		return
	}
	b.parallel(len(xv)/k, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			xi := xv[i*k : i*k+k]
			pi, ri, a, beta := pv[i*k : i*k+k][:len(xi)], rv[i*k : i*k+k][:len(xi)], a[:len(xi)], beta[:len(xi)]
			di := 1.0
			if dv != nil {
				di = dv[i]
			}
			for c := range xi {
				p0 := pi[c]
				xi[c] += a[c] * p0
				pi[c] = di*ri[c] + beta[c]*p0
			}
		}
	})
}

// sumRows is sum for len(out) sums at once over n rows: f adds the sums of
// its range of rows into s, zeros of its own (no two goroutines share a
// cache line), and the ranges' sums are added into out in range order, so
// out depends only on n and the thread count.
func (b *Backend) sumRows(n int, out []float64, f func(lo, hi int, s []float64)) {
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
