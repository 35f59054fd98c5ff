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
	yv, xv := b.vector("SpMV", y), b.vector("SpMV", x)
	if yv == nil || xv == nil {
		return
	}
	m, ok := a.(*Matrix)
	switch {
	case !ok || m == nil || m.b != b:
		b.fail(fmt.Errorf("gpu: SpMV: %T is not a matrix of this backend", a))
		return
	case beta != 0 && beta != 1:
		b.fail(fmt.Errorf("gpu: SpMV: beta %g is neither 0 nor 1", beta))
		return
	case (m.rowMap == 0 && yv.n != m.rows) || xv.n != m.cols:
		b.fail(fmt.Errorf("gpu: SpMV: %dx%d matrix, x of %d, y of %d", m.rows, m.cols, xv.n, yv.n))
		return
	}
	if w == 0 {
		w = m.width
	}
	i := 0
	for spmvWidths[i] != w {
		i++
	}
	b.launch(&b.fn.spmv[m.prec][i], ceilDiv(m.rows*w, blockSize),
		uint64(m.rows), uint64(m.rowPtr), uint64(m.col), uint64(m.val), uint64(xv.ptr), uint64(yv.ptr), uint64(beta), uint64(m.rowMap))
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
	b.fail(b.drv.check(b.drv.call(b.drv.memcpyDtoDAsync, d.ptr, s.ptr, uintptr(8*d.n), b.stream),
		fmt.Sprintf("cuMemcpyDtoDAsync(%d bytes)", 8*d.n)))
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

// UpdateXRZ is UpdateXR fused with z = d .* r; it returns r'r and r'z
// (deterministic like Dot). NaNs once an error is recorded.
func (b *Backend) UpdateXRZ(x, r backend.Vector, a float64, p, q, d, z backend.Vector) (float64, float64) {
	defer b.enter()()
	var vs [6]*Vector
	for i, v := range []backend.Vector{x, r, p, q, d, z} {
		if vs[i] = b.vector("UpdateXRZ", v); vs[i] == nil {
			return math.NaN(), math.NaN()
		}
	}
	n := vs[0].n
	if !b.sameLen("UpdateXRZ", n, vs[1].n, vs[2].n, vs[3].n, vs[4].n, vs[5].n) {
		return math.NaN(), math.NaN()
	}
	if n == 0 {
		return 0, 0
	}
	s := b.reduce2(&b.fn.updateXRZ, n, uint64(n), f64(a), uint64(vs[0].ptr), uint64(vs[1].ptr),
		uint64(vs[2].ptr), uint64(vs[3].ptr), uint64(vs[4].ptr), uint64(vs[5].ptr))
	return s[0], s[1]
}

var _ backend.Backend = (*Backend)(nil)
