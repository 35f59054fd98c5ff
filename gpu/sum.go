package gpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
)

// Sum is a float64 in page-locked host memory that kernels add to directly
// (unified addressing): SpMVDot's last block adds its launch's total, and
// TakeSum reads it once the stream is done, without a copy command.
type Sum struct {
	b *Backend
	p unsafe.Pointer // *float64, page-locked
}

// NewSum returns a sum at zero.
func (b *Backend) NewSum() (backend.Sum, error) {
	defer b.enter()()
	if b.err != nil {
		return nil, b.err
	}
	s := &Sum{b: b}
	d := b.drv
	if err := d.check(d.call(d.memAllocHost, uintptr(unsafe.Pointer(&s.p)), 8), "cuMemAllocHost(8 bytes for a sum)"); err != nil {
		return nil, err
	}
	*(*float64)(s.p) = 0
	return s, nil
}

// Free releases the sum's memory; the work queued with it must be done.
func (s *Sum) Free() {
	if s.p == nil {
		return
	}
	defer s.b.enter()()
	s.b.fail(s.b.drv.check(s.b.drv.call(s.b.drv.memFreeHost, uintptr(s.p)), "cuMemFreeHost(sum)"))
	s.p = nil
}

// TakeSum waits for the queued work, returns s and sets it to zero. NaN and
// the error once one is recorded.
func (b *Backend) TakeSum(s backend.Sum) (float64, error) {
	defer b.enter()()
	v, ok := s.(*Sum)
	if !ok || v == nil || v.b != b || v.p == nil {
		b.fail(fmt.Errorf("gpu: TakeSum: %T is not a sum of this backend", s))
	}
	if err := b.syncLocked(); err != nil {
		return math.NaN(), err
	}
	p := (*float64)(v.p)
	t := *p
	*p = 0
	return t, nil
}

// SpMVDot is SpMV that also adds w'(A*x) over the rows it computes to s.
func (b *Backend) SpMVDot(y backend.Vector, a backend.Matrix, x backend.Vector, beta float64, w backend.Vector, s backend.Sum) {
	b.spmvDot(y, a, x, beta, w, s, 0)
}

// spmvDot is SpMVDot with width threads per row (one of spmvWidths), or the
// matrix's own width when width is 0. The kernel strides over the rows with
// one wave of blocks, which the deterministic grid-wide sum has room for.
func (b *Backend) spmvDot(y backend.Vector, a backend.Matrix, x backend.Vector, beta float64, w backend.Vector, s backend.Sum, width int) {
	defer b.enter()()
	m := b.spmvCheck("SpMVDot", y, a, x, beta)
	wv := b.vector("SpMVDot", w)
	sum, ok := s.(*Sum)
	switch {
	case m == nil || wv == nil:
		return
	case !ok || sum == nil || sum.b != b || sum.p == nil:
		b.fail(fmt.Errorf("gpu: SpMVDot: %T is not a sum of this backend", s))
		return
	case wv.n != y.Len():
		b.fail(fmt.Errorf("gpu: SpMVDot: w of %d for y of %d", wv.n, y.Len()))
		return
	}
	i, width := widthIndex(m, width)
	yv, xv := y.(*Vector), x.(*Vector)
	k := &b.fn.spmvDot[m.prec][i]
	b.launch(k, b.wave(k, ceilDiv(m.rows*width, blockSize)),
		uint64(m.rows), uint64(m.rowPtr), uint64(m.col), uint64(m.val), uint64(xv.ptr), uint64(yv.ptr), uint64(beta), uint64(m.rowMap),
		uint64(wv.ptr), uint64(b.partials), uint64(b.counter), uint64(uintptr(sum.p)))
}
