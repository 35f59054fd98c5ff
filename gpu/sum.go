package gpu

import (
	"fmt"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
)

// Sum is a set of float64 sums in page-locked host memory that kernels add
// to directly (unified addressing): SpMMDot's last block adds its launch's
// totals, and TakeSum reads them once the stream is done, without a copy
// command.
type Sum struct {
	b *Backend
	p unsafe.Pointer // n float64s, page-locked
	n int
}

// NewSum returns n sums at zero.
func (b *Backend) NewSum(n int) (backend.Sum, error) {
	defer b.enter()()
	if b.err != nil {
		return nil, b.err
	}
	if n < 1 {
		return nil, fmt.Errorf("gpu: NewSum: %d sums", n)
	}
	s := &Sum{b: b, n: n}
	var err error
	if s.p, err = b.drv.MemAllocHost(8*n, "sums"); err != nil {
		return nil, err
	}
	clear(s.values())
	return s, nil
}

// values are the sums, in host memory.
func (s *Sum) values() []float64 { return unsafe.Slice((*float64)(s.p), s.n) }

// Free releases the sums' memory; the work queued with them must be done.
func (s *Sum) Free() {
	if s.p == nil {
		return
	}
	defer s.b.enter()()
	s.b.fail(s.b.drv.MemFreeHost(s.p, "sums"))
	s.p = nil
}

// sum returns s as a Sum of this backend with room for n sums, or records
// an error naming the call and returns nil.
func (b *Backend) sum(call string, s backend.Sum, n int) *Sum {
	v, ok := s.(*Sum)
	if !ok || v == nil || v.b != b || v.p == nil || v.n < n {
		b.fail(fmt.Errorf("gpu: %s: %T is not a sum of this backend with room for %d", call, s, n))
		return nil
	}
	return v
}

// TakeSum waits for the queued work, copies the sums into out and sets them
// to zero. NaNs and the error once one is recorded.
func (b *Backend) TakeSum(s backend.Sum, out []float64) error {
	defer b.enter()()
	v := b.sum("TakeSum", s, len(out))
	if v != nil && v.n != len(out) {
		b.fail(fmt.Errorf("gpu: TakeSum: %d sums into %d", v.n, len(out)))
	}
	if err := b.syncLocked(); err != nil {
		fillNaN(out)
		return err
	}
	sums := v.values()
	copy(out, sums)
	clear(sums)
	return nil
}

// SpMMDot is SpMM that also adds w[:,c]'(A*X)[:,c] over the rows it
// computes to sum c of s.
func (b *Backend) SpMMDot(y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64, w backend.Vector, s backend.Sum) {
	b.spmm(y, a, x, k, beta, w, s, 0)
}

// spmvDot is SpMMDot of one column with width threads per row (one of
// spmvWidths), or the matrix's own width when width is 0.
func (b *Backend) spmvDot(y backend.Vector, a backend.Matrix, x backend.Vector, beta float64, w backend.Vector, s backend.Sum, width int) {
	defer b.enter()()
	m := b.spmvCheck("SpMMDot", y, a, x, beta)
	wv := b.vector("SpMMDot", w)
	sum := b.sum("SpMMDot", s, 1)
	switch {
	case m == nil || wv == nil || sum == nil:
		return
	case wv.n != y.Len():
		b.fail(fmt.Errorf("gpu: SpMMDot: w of %d for y of %d", wv.n, y.Len()))
		return
	}
	b.queueSpMVDot(m, x.(*Vector), y.(*Vector), beta, wv, sum, width)
}

// queueSpMVDot is spmvDot on arguments checked already. The kernel strides
// over the rows with one wave of blocks, which the deterministic grid-wide
// sum has room for.
func (b *Backend) queueSpMVDot(m *Matrix, x, y *Vector, beta float64, w *Vector, sum *Sum, width int) {
	i, width := widthIndex(m, width)
	c := b.blocks(b.wave(kSpmvDot[m.prec][i], ceilDiv(m.rows*width, blockSize)))
	b.launchSpMVDot(c, m.prec, i, int32(m.rows), m.rowPtr, m.col, m.val, x.ptr, y.ptr, int32(beta), m.rowMap,
		w.ptr, b.partials, b.counter, uintptr(sum.p))
}
