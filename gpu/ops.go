package gpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
)

// spmv is SpMM of one column, y = A*x + beta*y with beta 0 or 1, with w
// threads per row (one of spmvWidths), or the matrix's own width when w is
// 0: the miniwarp kernels tuned for one vector (kernels/spmv.cu).
func (b *Backend) spmv(y backend.Vector, a backend.Matrix, x backend.Vector, beta float64, w int) {
	defer b.enter()()
	if m := b.spmvCheck("SpMM", y, a, x, beta); m != nil {
		b.queueSpMV(m, x.(*Vector), y.(*Vector), beta, w)
	}
}

// queueSpMV is spmv on arguments checked already.
func (b *Backend) queueSpMV(m *Matrix, x, y *Vector, beta float64, w int) {
	i, w := widthIndex(m, w)
	b.launchSpMV(b.blocks(ceilDiv(m.rows*w, blockSize)), m.prec, i,
		int32(m.rows), m.rowPtr, m.col, m.val, x.ptr, y.ptr, int32(beta), m.rowMap)
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

// spmvWidths are the group sizes of the miniwarp SpMV kernels, in the order
// of the second index of kSpmv and kSpmvDot.
var spmvWidths = [...]int{1, 2, 4, 8, 16, 32}

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
	d, s := b.vector("Gather", dst), b.vector("Gather", src)
	if d == nil || s == nil {
		return
	}
	if x := ours[*Index](b, "Gather", "an index", idx); x != nil && b.sameLen("Gather", d.n, x.n) {
		b.launchGather(b.blocks(b.elementBlocks(d.n)), int64(d.n), x.ptr, s.ptr, d.ptr)
	}
}

// owned is a handle that one backend made: an index, an inbox or an
// outbox.
type owned interface{ backendOf() *Backend }

// ours returns v as a P of backend b, or records why not and returns nil;
// op names the caller and what the kind of handle in errors.
func ours[P interface {
	comparable
	owned
}](b *Backend, op, what string, v any) P {
	var none P
	p, ok := v.(P)
	if !ok || p == none || p.backendOf() != b {
		b.fail(fmt.Errorf("gpu: %s: %T is not %s of this backend", op, v, what))
		return none
	}
	return p
}

// Fill sets every entry of x to v.
func (b *Backend) Fill(x backend.Vector, v float64) {
	defer b.enter()()
	if xv := b.vector("Fill", x); xv != nil {
		b.launchFill(b.blocks(b.elementBlocks(xv.n)), int64(xv.n), v, xv.ptr)
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

// axpby is AxpbyCols of one column: y = a*x + beta*y; with beta == 0 the
// old y is not read.
func (b *Backend) axpby(y *Vector, a float64, x *Vector, beta float64) {
	b.launchAxpby(b.blocks(b.elementBlocks(y.n)), int64(y.n), a, x.ptr, beta, y.ptr)
}

// mul is MulCols of one column: z = d .* r.
func (b *Backend) mul(z, d, r *Vector) {
	b.launchMul(b.blocks(b.elementBlocks(z.n)), int64(z.n), d.ptr, r.ptr, z.ptr)
}

// dot is DotCols of one column: x'y, summed in an order fixed by the
// length and the GPU, so the same inputs give the same bits on every run.
// NaN once an error is recorded.
func (b *Backend) dot(x, y *Vector) float64 {
	if x.n == 0 {
		return 0
	}
	b.launchDot(b.reduceGrid(kDot, x.n), int64(x.n), x.ptr, y.ptr, b.partials, b.counter, uintptr(b.host))
	return b.reduced()[0]
}

// updateRZ is UpdateRZCols for one column: deterministic like dot, NaNs
// once an error is recorded.
func (b *Backend) updateRZ(r *Vector, a float64, q, d *Vector) (float64, float64) {
	if r.n == 0 {
		return 0, 0
	}
	b.launchUpdateRZ(b.reduceGrid(kUpdateRZ, r.n), int64(r.n), a, r.ptr, q.ptr, d.ptr, b.partials, b.counter, uintptr(b.host))
	s := b.reduced()
	return s[0], s[1]
}

// updateXP is UpdateXPCols for one column; d may be nil.
func (b *Backend) updateXP(x *Vector, a float64, p, d, r *Vector, beta float64) {
	b.launchUpdateXP(b.blocks(b.elementBlocks(x.n)), int64(x.n), a, beta, x.ptr, p.ptr, d.arg(), r.ptr)
}

var _ backend.Backend = (*Backend)(nil)
