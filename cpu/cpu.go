// Package cpu implements backend.Backend on the host with goroutines. It is
// the reference that the GPU backend is tested against, and the backend CI
// and laptops solve with.
package cpu

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// Backend computes on the host with a fixed number of goroutines.
type Backend struct {
	threads int
	err     error // the first error recorded (a kernel called against the contract)
}

// New returns a CPU backend that splits each kernel over threads goroutines
// (all cores when threads <= 0). With several ranks on one node, give each
// rank its share of the cores.
func New(threads int) *Backend {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return &Backend{threads: threads}
}

// Vector is a host slice.
type Vector []float64

func (v Vector) Len() int                        { return len(v) }
func (v Vector) Slice(off, n int) backend.Vector { return v[off : off+n] }
func (v Vector) Free()                           {}

// Matrix is a host CSR block in double or single precision.
type Matrix struct {
	rows, cols, nnz int
	f64             *csr.Matrix[float64]
	f32             *csr.Matrix[float32]
	rowMap          []int32 // nil: row k of the block is row k of y
	bounds          []int   // the SpMV's row ranges (splitEntries)
}

func (m *Matrix) Rows() int { return m.rows }
func (m *Matrix) Cols() int { return m.cols }
func (m *Matrix) NNZ() int  { return m.nnz }
func (m *Matrix) Free()     {}

// Precision reports how the values are stored.
func (m *Matrix) Precision() backend.Precision {
	if m.f32 != nil {
		return backend.Single
	}
	return backend.Double
}

// Index is a host int32 slice.
type Index []int32

func (x Index) Len() int { return len(x) }
func (x Index) Free()    {}

func (b *Backend) Name() string   { return "cpu" }
func (b *Backend) Device() string { return fmt.Sprintf("host, %d threads", b.threads) }

func (b *Backend) NewVector(n int) (backend.Vector, error) { return make(Vector, n), nil }

// NewMatrix keeps m itself for double precision (no copy) and a float32 copy
// of its values for single.
func (b *Backend) NewMatrix(m *csr.Matrix[float64], rowMap []int32, p backend.Precision) (backend.Matrix, error) {
	if rowMap != nil && len(rowMap) != m.Rows {
		return nil, fmt.Errorf("cpu: NewMatrix: %d rows but a row map of %d", m.Rows, len(rowMap))
	}
	out := &Matrix{rows: m.Rows, cols: m.Cols, nnz: m.NNZ(), rowMap: rowMap}
	if p == backend.Single {
		out.f32 = csr.Convert[float32](m)
	} else {
		out.f64 = m
	}
	return out, nil
}

func (b *Backend) NewIndex(idx []int32) (backend.Index, error) {
	return append(Index(nil), idx...), nil
}

func (b *Backend) Upload(dst backend.Vector, src []float64) { copy(dst.(Vector), src) }

// Download copies src into dst, or returns the recorded error and copies
// nothing, as the GPU backend does.
func (b *Backend) Download(dst []float64, src backend.Vector) error {
	if b.err != nil {
		return b.err
	}
	copy(dst, src.(Vector))
	return nil
}

func (b *Backend) Pin(host []float64) (func(), error) { return func() {}, nil }

// checkBeta reports whether beta is 0 or 1, as the products' contract
// says, and records an error naming call when it is not.
func (b *Backend) checkBeta(call string, beta float64) bool {
	if beta != 0 && beta != 1 {
		b.fail(fmt.Errorf("cpu: %s: beta %g is neither 0 nor 1", call, beta))
		return false
	}
	return true
}

// checkProduct reports whether a product's beta is 0 or 1 and its blocks
// of k columns fit a, as the products' contract says (the rows of y are
// a's, or any k-column block when a maps its rows), and records an error
// naming call when they do not.
func (b *Backend) checkProduct(call string, y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64) bool {
	m, ok := a.(*Matrix)
	switch {
	case !b.checkBeta(call, beta):
		return false
	case !ok || m == nil:
		b.fail(fmt.Errorf("cpu: %s: %T is not a matrix of this backend", call, a))
	case k < 1 || x.Len() != m.cols*k || y.Len()%k != 0 || (m.rowMap == nil && y.Len() != m.rows*k):
		b.fail(fmt.Errorf("cpu: %s: %dx%d matrix, %d columns, x of %d, y of %d", call, m.rows, m.cols, k, x.Len(), y.Len()))
	default:
		return true
	}
	return false
}

// fail records err if it is the first error.
func (b *Backend) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Sum is a set of host float64 sums.
type Sum struct{ v []float64 }

func (s *Sum) Free() {}

func (b *Backend) NewSum(n int) (backend.Sum, error) {
	if n < 1 {
		return nil, fmt.Errorf("cpu: NewSum: %d sums", n)
	}
	return &Sum{v: make([]float64, n)}, nil
}

// TakeSum copies the sums into out and sets them to zero; once an error is
// recorded it returns it and sets out to NaN, as the GPU backend does.
func (b *Backend) TakeSum(s backend.Sum, out []float64) error {
	if b.err != nil {
		for i := range out {
			out[i] = math.NaN()
		}
		return b.err
	}
	v := s.(*Sum)
	if len(out) != len(v.v) {
		return fmt.Errorf("cpu: TakeSum: %d sums into %d", len(v.v), len(out))
	}
	copy(out, v.v)
	clear(v.v)
	return nil
}

func (b *Backend) Gather(dst, src backend.Vector, idx backend.Index) {
	d, s := dst.(Vector), src.(Vector)
	for k, i := range idx.(Index) {
		d[k] = s[i]
	}
}

func (b *Backend) Fill(x backend.Vector, v float64) {
	xv := x.(Vector)
	b.parallel(len(xv), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			xv[i] = v
		}
	})
}

func (b *Backend) Copy(dst, src backend.Vector) { copy(dst.(Vector), src.(Vector)) }

// axpby computes y = a*x + c*y, AxpbyCols of one column; with c == 0 it
// does not read y (which may hold NaN), as in BLAS and as the GPU kernel.
func (b *Backend) axpby(yv Vector, a float64, xv Vector, c float64) {
	b.parallel(len(yv), func(_, lo, hi int) {
		if c == 0 {
			for i := lo; i < hi; i++ {
				yv[i] = a * xv[i]
			}
			return
		}
		for i := lo; i < hi; i++ {
			yv[i] = a*xv[i] + c*yv[i]
		}
	})
}

// mul computes z = d .* r, MulCols of one column.
func (b *Backend) mul(zv, dv, rv Vector) {
	b.parallel(len(zv), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			zv[i] = dv[i] * rv[i]
		}
	})
}

// dot returns x'y, DotCols of one column, summed in range order.
func (b *Backend) dot(xv, yv Vector) float64 {
	return b.sum(len(xv), func(lo, hi int) float64 {
		var s float64
		for i := lo; i < hi; i++ {
			s += xv[i] * yv[i]
		}
		return s
	})
}

// Sync, Err and Close return the first error recorded: the CPU backend
// runs every kernel before it returns, so there is nothing to wait for.
func (b *Backend) Sync() error  { return b.err }
func (b *Backend) Err() error   { return b.err }
func (b *Backend) Close() error { return b.err }

// minChunk is the smallest number of entries worth a goroutine of its own.
const minChunk = 1 << 14

// chunks splits n entries into at most b.threads ranges of at least minChunk.
func (b *Backend) chunks(n int) int {
	c := n / minChunk
	if c > b.threads {
		c = b.threads
	}
	if c < 1 {
		c = 1
	}
	return c
}

// parallel runs f over [0,n) split into contiguous ranges, chunk k on its
// own goroutine.
func (b *Backend) parallel(n int, f func(k, lo, hi int)) {
	c := b.chunks(n)
	fork(c, func(k int) { f(k, k*n/c, (k+1)*n/c) })
}

// fork runs f(0), ..., f(c-1), each on its own goroutine when c > 1, and
// returns when all have.
func fork(c int, f func(k int)) {
	if c == 1 {
		f(0)
		return
	}
	var wg sync.WaitGroup
	for k := 0; k < c; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			f(k)
		}(k)
	}
	wg.Wait()
}

// sum runs f over contiguous ranges of [0,n) and adds the partial results in
// range order, so the result depends only on n and the thread count.
func (b *Backend) sum(n int, f func(lo, hi int) float64) float64 {
	part := make([]float64, b.chunks(n))
	b.parallel(n, func(k, lo, hi int) { part[k] = f(lo, hi) })
	var s float64
	for _, p := range part {
		s += p
	}
	return s
}

var _ backend.Backend = (*Backend)(nil)
