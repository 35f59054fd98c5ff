package gpu

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
)

// SpMV computes y = A*x + beta*y with beta 0 or 1, with a.Width() threads
// per row.
func (b *Backend) SpMV(y backend.Vector, a backend.Matrix, x backend.Vector, beta float64) {
	b.spmv(y, a, x, beta, 0)
}

// spmv is SpMV with w threads per row (one of spmvWidths), or the matrix's
// own width when w is 0.
func (b *Backend) spmv(y backend.Vector, a backend.Matrix, x backend.Vector, beta float64, w int) {
	defer b.enter()()
	m := b.spmvCheck("SpMV", y, a, x, beta)
	if m == nil {
		return
	}
	i, w := widthIndex(m, w)
	yv, xv := y.(*Vector), x.(*Vector)
	b.launch(&b.fn.spmv[m.prec][i], ceilDiv(m.rows*w, blockSize),
		uint64(m.rows), uint64(m.rowPtr), uint64(m.col), uint64(m.val), uint64(xv.ptr), uint64(yv.ptr), uint64(beta), uint64(m.rowMap))
}

// spmvCheck returns a as a matrix of this backend, or records why y = a*x +
// beta*y cannot be computed (op names the caller) and returns nil.
func (b *Backend) spmvCheck(op string, y backend.Vector, a backend.Matrix, x backend.Vector, beta float64) *Matrix {
	yv, xv := b.vector(op, y), b.vector(op, x)
	if yv == nil || xv == nil {
		return nil
	}
	m, ok := a.(*Matrix)
	switch {
	case !ok || m == nil || m.b != b:
		b.fail(fmt.Errorf("gpu: %s: %T is not a matrix of this backend", op, a))
		return nil
	case beta != 0 && beta != 1:
		b.fail(fmt.Errorf("gpu: %s: beta %g is neither 0 nor 1", op, beta))
		return nil
	case (m.rowMap == 0 && yv.n != m.rows) || xv.n != m.cols:
		b.fail(fmt.Errorf("gpu: %s: %dx%d matrix, x of %d, y of %d", op, m.rows, m.cols, xv.n, yv.n))
		return nil
	}
	return m
}

// widthIndex returns the index in spmvWidths of w threads per row, or of
// m's own width when w is 0, and that width.
func widthIndex(m *Matrix, w int) (int, int) {
	if w == 0 {
		w = m.width
	}
	i := 0
	for spmvWidths[i] != w {
		i++
	}
	return i, w
}

// Gather sets dst[k] = src[idx[k]].
func (b *Backend) Gather(dst, src backend.Vector, idx backend.Index) {
	defer b.enter()()
	if d := b.vector("Gather", dst); d != nil {
		b.gather(d, src, idx, "Gather", b.stream)
	}
}

// gather queues d = src[idx] on stream; op names the caller in errors.
func (b *Backend) gather(d *Vector, src backend.Vector, idx backend.Index, op string, stream uintptr) {
	s := b.vector(op, src)
	if s == nil {
		return
	}
	x, ok := idx.(*Index)
	if !ok || x == nil || x.b != b {
		b.fail(fmt.Errorf("gpu: %s: %T is not an index of this backend", op, idx))
		return
	}
	if b.sameLen(op, d.n, x.n) {
		b.launchOn(stream, &b.fn.gather, b.elementBlocks(d.n), uint64(d.n), uint64(x.ptr), uint64(s.ptr), uint64(d.ptr))
	}
}

// Fill sets every entry of x to v.
func (b *Backend) Fill(x backend.Vector, v float64) {
	defer b.enter()()
	if xv := b.vector("Fill", x); xv != nil {
		b.launch(&b.fn.fill, b.elementBlocks(xv.n), uint64(xv.n), f64(v), uint64(xv.ptr))
	}
}

// Copy sets dst = src.
func (b *Backend) Copy(dst, src backend.Vector) {
	defer b.enter()()
	d, s := b.vector("Copy", dst), b.vector("Copy", src)
	if d == nil || s == nil || !b.sameLen("Copy", d.n, s.n) || d.n == 0 {
		return
	}
	b.copyDevice(d.ptr, s.ptr, 8*d.n)
}

// Axpby computes y = a*x + b*y; with b == 0 the old y is not read.
func (b *Backend) Axpby(y backend.Vector, a float64, x backend.Vector, beta float64) {
	defer b.enter()()
	yv, xv := b.vector("Axpby", y), b.vector("Axpby", x)
	if yv != nil && xv != nil && b.sameLen("Axpby", yv.n, xv.n) {
		b.launch(&b.fn.axpby, b.elementBlocks(yv.n), uint64(yv.n), f64(a), uint64(xv.ptr), f64(beta), uint64(yv.ptr))
	}
}

// Mul computes z = d .* r.
func (b *Backend) Mul(z, d, r backend.Vector) {
	defer b.enter()()
	zv, dv, rv := b.vector("Mul", z), b.vector("Mul", d), b.vector("Mul", r)
	if zv != nil && dv != nil && rv != nil && b.sameLen("Mul", zv.n, dv.n, rv.n) {
		b.launch(&b.fn.mul, b.elementBlocks(zv.n), uint64(zv.n), uint64(dv.ptr), uint64(rv.ptr), uint64(zv.ptr))
	}
}

// Dot returns x'y, summed in an order fixed by the length and the GPU: the
// same inputs give the same bits on every run. NaN once an error is recorded.
func (b *Backend) Dot(x, y backend.Vector) float64 {
	defer b.enter()()
	xv, yv := b.vector("Dot", x), b.vector("Dot", y)
	if xv == nil || yv == nil || !b.sameLen("Dot", xv.n, yv.n) {
		return math.NaN()
	}
	if xv.n == 0 {
		return 0
	}
	return b.reduce(&b.fn.dot, xv.n, uint64(xv.n), uint64(xv.ptr), uint64(yv.ptr))
}

// updateRZ is UpdateRZCols for one column: deterministic like Dot, NaNs
// once an error is recorded.
func (b *Backend) updateRZ(r *Vector, a float64, q, d *Vector) (float64, float64) {
	if r.n == 0 {
		return 0, 0
	}
	s := b.reduce2(&b.fn.updateRZ, r.n, uint64(r.n), f64(a), uint64(r.ptr), uint64(q.ptr), uint64(d.ptr))
	return s[0], s[1]
}

// updateXP is UpdateXPCols for one column; d may be nil.
func (b *Backend) updateXP(x *Vector, a float64, p, d, r *Vector, beta float64) {
	b.launch(&b.fn.updateXP, b.elementBlocks(x.n), uint64(x.n), f64(a), f64(beta), uint64(x.ptr), uint64(p.ptr), d.arg(), uint64(r.ptr))
}

var _ backend.Backend = (*Backend)(nil)
