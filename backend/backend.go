// Package backend defines the compute interface that the algorithms of
// fsai-dist (distributed SpMV with overlap, the Krylov methods, FSAI
// application) are written against once. It holds no kernel of one
// algorithm: a method that fuses its own steps asks for an optional
// interface of its own (pcg.Fused) and falls back to the block operations
// here. Package cpu implements it with goroutines and is the
// reference; package gpu implements it with CUDA. Algorithm code never asks
// which one it runs on. Package backendtest checks an implementation
// against this contract, method by method.
//
// Kernels (SpMV, vector updates, gathers) do not return errors: a backend that
// runs them asynchronously (a GPU stream) cannot know yet. The first failure is
// kept and returned by Err, by Sync and by every call that returns data to the
// host, so callers check once per iteration rather than once per kernel.
package backend

import "github.com/fsai-dist/fsai-dist/csr"

// Precision selects how a matrix's values are stored on the backend. Vectors
// are always float64; a Single matrix is read as float32 and accumulated in
// float64, which halves the traffic of its values in SpMV.
type Precision int

const (
	Double Precision = iota
	Single
)

func (p Precision) String() string {
	if p == Single {
		return "single"
	}
	return "double"
}

// Vector is a dense float64 array that lives where the backend computes.
type Vector interface {
	Len() int
	// Slice returns a view of n entries starting at off, sharing memory.
	Slice(off, n int) Vector
	// Free releases the memory; views must not be freed.
	Free()
}

// Matrix is a CSR block that lives where the backend computes.
type Matrix interface {
	Rows() int
	Cols() int
	NNZ() int
	Precision() Precision
	Free()
}

// Sum is a set of float64 sums on the backend that products add to
// (SpMMDot) without waiting.
type Sum interface {
	Free()
}

// Index is an int32 array that lives where the backend computes (halo send
// lists).
type Index interface {
	Len() int
	Free()
}

// MemoryReporter is a Backend that counts its device memory: PeakBytes is
// the most its allocations held at once, in bytes. The CPU backend, whose
// memory is the process's, does not implement it.
type MemoryReporter interface {
	PeakBytes() int64
}

// Clock is a Backend that times the work it has queued with marks in its
// queue (device events), so that timing an operation adds no wait for the
// device: Mark records a point of the queue; Seconds waits for the device
// to pass to, returns the device's seconds from from to to, and releases
// both marks. The CPU backend, whose work is done when its calls return,
// does not implement it.
type Clock interface {
	Mark() (Mark, error)
	Seconds(from, to Mark) (float64, error)
}

// Mark is a point in a Clock's queue.
type Mark uintptr

// Backend is a compute device: memory, transfers and the kernels the
// algorithms need. A Backend is used by one goroutine at a time; kernels run
// in the order they are called.
type Backend interface {
	// Name is "cpu" or "cuda"; Device describes the hardware in words.
	Name() string
	Device() string

	NewVector(n int) (Vector, error)
	// NewMatrix uploads m. With a row map, row k of m is row rowMap[k] of
	// the products: they then touch only those rows of y, which lets an
	// off-diagonal block store just its non-empty rows (a block coupling
	// two stripes has few).
	NewMatrix(m *csr.Matrix[float64], rowMap []int32, p Precision) (Matrix, error)
	NewIndex(idx []int32) (Index, error)
	// SetValues overwrites the values of m, which keeps its pattern and
	// memory: vals lists them in the order of the CSR block m was made
	// from, and is rounded to m's precision. It waits for the copy, so
	// vals may change when it returns. Solvers whose matrix changes values
	// from step to step (Newton, time stepping) use it.
	SetValues(m Matrix, vals []float64) error

	// Upload copies host data into dst. It may return before the copy is
	// done: src must stay unchanged until the next synchronizing call
	// (Download, a dot product, TakeSum, Sync).
	Upload(dst Vector, src []float64)
	// Download copies src into host memory; it waits for queued work.
	Download(dst []float64, src Vector) error
	// Pin makes host memory faster to transfer (page-locks it on a GPU) until
	// the returned function is called. Host buffers of halo exchanges use it.
	Pin(host []float64) (unpin func(), err error)

	// Gather sets dst[k] = src[idx[k]] (the halo pack).
	Gather(dst, src Vector, idx Index)
	// PackHalo sets host[k] = src[idx[k]] through stage, a device vector of
	// len(idx) values (the halo pack of a distributed SpMV). It returns at
	// once: the copy to the host runs beside the kernels queued after it (the
	// diagonal product), and wait blocks until host holds the values. host
	// must stay pinned (Pin) and untouched until wait returns.
	PackHalo(host []float64, stage, src Vector, idx Index) (wait func() error)
	// UploadHalo is Upload for a halo that arrived after the last PackHalo:
	// the copy waits only for the work queued before that PackHalo, so it
	// runs beside the kernels queued since (the diagonal product), and the
	// kernels queued after it see dst. It may return before the copy is
	// done: src must stay unchanged until the next synchronizing call or
	// the wait of the next PackHalo.
	UploadHalo(dst Vector, src []float64)

	Fill(x Vector, v float64)
	Copy(dst, src Vector)

	// The kernels below work on row-major blocks of k columns (several
	// right-hand sides): entry (i, c) of an n x k block is element i*k+c
	// of its Vector. A vector is a block of one column, so each operation
	// is written once, for blocks; the functions SpMV, Dot, Axpby and Mul
	// of this package call them with k = 1. They read a matrix once for
	// all k columns, and take and return one scalar per column.

	// SpMM computes Y = A*X + beta*Y for blocks of k columns with beta 0
	// or 1 (on the mapped rows only, for a matrix with a row map). With
	// beta 0 it does not read Y, which may then hold anything, NaN
	// included. A beta other than 0 or 1 is an error: it is recorded (Err)
	// and nothing is computed; so are an X of other than Cols()*k values
	// and a Y of other than Rows()*k (with a row map, a Y of any whole
	// number of k-column rows).
	SpMM(y Vector, a Matrix, x Vector, k int, beta float64)
	// SpMMDot is SpMM that also adds w[:,c]'(A*X)[:,c] to sum c of s for
	// blocks of k columns: the dot product of w (indexed like y) with the
	// product over the rows it computes, not with what y held before. PCG's
	// p'Ap of every column then costs no pass of its own. It returns at
	// once; TakeSum waits for the totals. With k = 1 its y holds SpMM's bits.
	SpMMDot(y Vector, a Matrix, x Vector, k int, beta float64, w Vector, s Sum)
	// NewSum returns n sums at zero for SpMMDot.
	NewSum(n int) (Sum, error)
	// TakeSum waits for queued work, copies the sums of s into out (one
	// per sum) and sets them back to zero. Products that add to s in one
	// order give the same bits every time.
	TakeSum(s Sum, out []float64) error

	// DotCols sets out[c] to the local dot product of columns c of x and y
	// (no reduction across ranks), for blocks of len(out) columns. Repeated
	// on the same inputs it gives the same bits.
	DotCols(x, y Vector, out []float64)
	// DotPairCols sets xy[c] and xz[c] to the local dot products of column
	// c of x with those of y and z, reading x once, for blocks of len(xy)
	// == len(xz) columns: r'r and r'z after a preconditioner, in one
	// reduction.
	DotPairCols(x, y, z Vector, xy, xz []float64)
	// DotMany sets out[c] to the local dot product of w with vector c of
	// the len(out) vectors of w.Len() entries that follow one another in
	// v (v holds at least len(out)*w.Len()), reading w once: a new vector
	// against a Krylov basis (GMRES), in one reduction.
	DotMany(v, w Vector, out []float64)
	// AxpyMany computes w += sum_c a[c]*v_c over the len(a) vectors v_c of
	// w.Len() entries that follow one another in v (v holds at least
	// len(a)*w.Len()), reading and writing w once: DotMany's transpose,
	// a combination of a Krylov basis (GMRES's projections and its update
	// of x) in one pass. Each entry adds its terms in an order the
	// backend fixes; the result is within rounding of len(a) Axpby calls.
	AxpyMany(w, v Vector, a []float64)
	// AxpyDotMany is AxpyMany followed by DotMany and w's squared norm, in
	// one pass: w += sum_c a[c]*v_c over the len(a) vectors v_c of w.Len()
	// entries that follow one another in v, then out[c] = v_c'w for c <
	// len(a) and out[len(a)] = w'w, with w as updated (len(out) ==
	// len(a)+1). Each entry of w is final once its terms are added, so
	// the dots are taken in the same pass and each v_c is read once, where
	// AxpyMany then DotMany read it twice: GMRES's Gram-Schmidt projection
	// and its reorthogonalization's dots in one pass.
	AxpyDotMany(w, v Vector, a, out []float64)
	// AxpbyCols computes y[:,c] = a[c]*x[:,c] + b[c]*y[:,c] for blocks of
	// len(a) == len(b) columns; a column with b[c] == 0 does not read y,
	// which may then hold anything, NaN included (as in BLAS).
	AxpbyCols(y Vector, a []float64, x Vector, b []float64)
	// MulCols computes z[i,c] = d[i]*r[i,c] for blocks of k columns: one
	// diagonal scaling (Jacobi's) for every column.
	MulCols(z, d, r Vector, k int)

	// Sync waits for all queued work and returns the first error.
	Sync() error
	// Err returns the first error seen so far without waiting.
	Err() error
	Close() error
}

// SpMV computes y = A*x + beta*y for one vector (beta 0 or 1): SpMM of one
// column.
func SpMV(b Backend, y Vector, a Matrix, x Vector, beta float64) { b.SpMM(y, a, x, 1, beta) }

// Dot returns the local x'y of two vectors (no reduction across ranks):
// DotCols of one column. NaN once the backend has recorded an error.
func Dot(b Backend, x, y Vector) float64 {
	out := []float64{0}
	b.DotCols(x, y, out)
	return out[0]
}

// Axpby computes y = a*x + c*y for one vector, not reading y when c == 0:
// AxpbyCols of one column.
func Axpby(b Backend, y Vector, a float64, x Vector, c float64) {
	b.AxpbyCols(y, []float64{a}, x, []float64{c})
}

// Mul computes z = d .* r element-wise (Jacobi scaling): MulCols of one
// column.
func Mul(b Backend, z, d, r Vector) { b.MulCols(z, d, r, 1) }
