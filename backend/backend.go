// Package backend defines the compute interface that the algorithms of
// fsai-dist (distributed SpMV with overlap, PCG, FSAI application) are
// written against once. Package cpu implements it with goroutines and is the
// reference; package gpu implements it with CUDA. Algorithm code never asks
// which one it runs on.
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

// Index is an int32 array that lives where the backend computes (halo send
// lists).
type Index interface {
	Len() int
	Free()
}

// Backend is a compute device: memory, transfers and the kernels the
// algorithms need. A Backend is used by one goroutine at a time; kernels run
// in the order they are called.
type Backend interface {
	// Name is "cpu" or "cuda"; Device describes the hardware in words.
	Name() string
	Device() string

	NewVector(n int) (Vector, error)
	// NewMatrix uploads m. With a row map, row k of m is row rowMap[k] of
	// the products: SpMV then touches only those rows of y, which lets an
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
	// (Download, Dot, UpdateXR, Sync).
	Upload(dst Vector, src []float64)
	// Download copies src into host memory; it waits for queued work.
	Download(dst []float64, src Vector) error
	// Pin makes host memory faster to transfer (page-locks it on a GPU) until
	// the returned function is called. Host buffers of halo exchanges use it.
	Pin(host []float64) (unpin func(), err error)

	// SpMV computes y = A*x + beta*y with beta 0 or 1 (on the mapped rows
	// only, for a matrix with a row map).
	SpMV(y Vector, a Matrix, x Vector, beta float64)
	// Gather sets dst[k] = src[idx[k]] (the halo pack).
	Gather(dst, src Vector, idx Index)

	Fill(x Vector, v float64)
	Copy(dst, src Vector)
	// Axpby computes y = a*x + b*y.
	Axpby(y Vector, a float64, x Vector, b float64)
	// Mul computes z = d .* r element-wise (Jacobi scaling).
	Mul(z, d, r Vector)
	// Dot returns x'y over the local entries (no reduction across ranks).
	Dot(x, y Vector) float64
	// UpdateXR is the fused PCG update x += a*p, r -= a*q; it returns the
	// local r'r after the update.
	UpdateXR(x, r Vector, a float64, p, q Vector) float64
	// UpdateXRZ is UpdateXR fused with a diagonal preconditioner: it also
	// sets z = d .* r and returns the local r'r and r'z, so a Jacobi PCG
	// step reads each vector once.
	UpdateXRZ(x, r Vector, a float64, p, q, d, z Vector) (rr, rz float64)

	// Sync waits for all queued work and returns the first error.
	Sync() error
	// Err returns the first error seen so far without waiting.
	Err() error
	Close() error
}
