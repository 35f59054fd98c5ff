// Package afsai computes factored sparse approximate inverse (FSAI)
// preconditioners M^-1 = G'G of a symmetric positive definite matrix A, with
// G lower triangular: the adaptive aFSAI of Janna, Ferronato and Gambolati
// (blueprint, paper 001 section 2) and the static FSAI with a pattern from
// powers of the sparsified A and post-filtering (paper 000, Algorithm 3.1).
//
// Everything here works on one rank's local assembled matrix: a square CSR
// block with both triangles stored, whose leading rows may come from left
// neighbours. Callers ask for a list of rows (in the distributed case the
// rank's own rows, the last ones of the block) and get those rows of G in the
// block's local column numbering. Rows are independent, so they are computed
// in parallel by a pool of goroutines, each with its own scratch; a row's
// result does not depend on which goroutine computes it.
//
// Precision: the dense factorization, the solves and the Kaporin gradient run
// in the element type T of A, so a float32 A gives a genuine single-precision
// set-up like the GPU's (blueprint 4.3); the final scalars (the 1/sqrt(psi)
// scaling, the row norms and the quadratic form of post-filtering) are
// evaluated in float64 and rounded to T.
package afsai

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Stats describes a computed G.
type Stats struct {
	// NNZ is the number of stored entries of the computed rows of G,
	// diagonal included.
	NNZ int64
	// MaxPattern is the largest number of off-diagonal columns of a row
	// before post-filtering: the size of the largest dense system solved.
	MaxPattern int
	// FallbackRows counts rows whose dense Cholesky broke down (a pivot or
	// psi not safely positive, which single precision can cause on
	// ill-conditioned data); such a row keeps the part of its pattern that
	// factored.
	FallbackRows int
	// Dropped is the number of entries removed by post-filtering (static
	// FSAI only).
	Dropped int64
}

func (s *Stats) merge(o Stats) {
	s.NNZ += o.NNZ
	s.MaxPattern = max(s.MaxPattern, o.MaxPattern)
	s.FallbackRows += o.FallbackRows
	s.Dropped += o.Dropped
}

// rowOut collects computed rows of G: one chunk's part of the result.
type rowOut[T csr.Real] struct {
	lens  []int32
	cols  []int32
	vals  []T
	stats Stats
}

// add appends one row with the given (sorted) columns and values.
func (o *rowOut[T]) add(cols []int32, vals []T) {
	o.lens = append(o.lens, int32(len(cols)))
	o.cols = append(o.cols, cols...)
	o.vals = append(o.vals, vals...)
	o.stats.NNZ += int64(len(cols))
}

// rowFunc computes G's row for requested row k (local row rows[k]) and adds
// it to out. Each worker goroutine gets its own rowFunc, closing over its own
// scratch.
type rowFunc[T csr.Real] func(k int, out *rowOut[T])

// checkInput validates A and the requested rows and returns A's diagonal.
// Every diagonal entry must be positive: A is meant to be SPD, and the
// set-ups divide by and take square roots of them.
func checkInput[T csr.Real](a *csr.Matrix[T], rows []int) ([]T, error) {
	if a.Rows != a.Cols {
		return nil, fmt.Errorf("afsai: matrix is %dx%d, not square", a.Rows, a.Cols)
	}
	if len(a.RowPtr) != a.Rows+1 {
		return nil, fmt.Errorf("afsai: %d row pointers for %d rows", len(a.RowPtr), a.Rows)
	}
	for k, i := range rows {
		if i < 0 || i >= a.Rows {
			return nil, fmt.Errorf("afsai: requested row %d (entry %d) out of range [0,%d)", i, k, a.Rows)
		}
	}
	diag := make([]T, a.Rows)
	bad := make([]int, parallel.Chunks(a.Rows)) // each chunk's first bad row, or -1
	parallel.For(a.Rows, func(c, lo, hi int) {
		bad[c] = -1
		for i := lo; i < hi; i++ {
			d := float64(a.At(i, i))
			if !(d > 0) || math.IsInf(d, 0) {
				bad[c] = i
				return
			}
			diag[i] = T(d)
		}
	})
	for _, i := range bad {
		if i >= 0 {
			return nil, DiagonalError(i, float64(a.At(i, i)))
		}
	}
	return diag, nil
}

// computeRows runs the row function of one worker per goroutine over chunks
// of the requested rows and assembles the rows, in order, into a
// len(rows) x cols matrix. Chunks are handed out dynamically, since rows
// differ in cost; results do not depend on the assignment. rowCap, when not
// nil, is the expected number of entries of row k (a bound in the
// fixed-pattern set-up): every chunk's output starts with room for them, so
// it is allocated once rather than grown by appends.
func computeRows[T csr.Real](rows []int, cols int, rowCap func(k int) int, newWorker func() rowFunc[T]) (*csr.Matrix[T], Stats, error) {
	workers := runtime.GOMAXPROCS(0)
	chunk := min(max(len(rows)/(8*workers), 16), 1024)
	nchunks := (len(rows) + chunk - 1) / chunk
	workers = min(workers, nchunks)
	outs := make([]rowOut[T], nchunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			row := newWorker()
			for {
				c := int(next.Add(1) - 1)
				if c >= nchunks {
					return
				}
				lo, hi := c*chunk, min((c+1)*chunk, len(rows))
				if rowCap != nil {
					n := 0
					for k := lo; k < hi; k++ {
						n += rowCap(k)
					}
					outs[c] = rowOut[T]{lens: make([]int32, 0, hi-lo), cols: make([]int32, 0, n), vals: make([]T, 0, n)}
				}
				for k := lo; k < hi; k++ {
					row(k, &outs[c])
				}
			}
		})
	}
	wg.Wait()

	var stats Stats
	at := make([]int, nchunks+1) // chunk c's entries start at at[c] in G
	for c := range outs {
		stats.merge(outs[c].stats)
		at[c+1] = at[c] + len(outs[c].cols)
	}
	if stats.NNZ > math.MaxInt32 {
		return nil, stats, fmt.Errorf("afsai: G has %d entries, more than a CSR block's int32 row pointers hold", stats.NNZ)
	}
	g := &csr.Matrix[T]{Rows: len(rows), Cols: cols, RowPtr: make([]int32, len(rows)+1),
		ColIdx: make([]int32, stats.NNZ), Val: make([]T, stats.NNZ)}
	parallel.For(nchunks, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			k, ptr := c*chunk, int32(at[c])
			for _, n := range outs[c].lens {
				ptr += n
				g.RowPtr[k+1] = ptr
				k++
			}
			copy(g.ColIdx[at[c]:], outs[c].cols)
			copy(g.Val[at[c]:], outs[c].vals)
		}
	})
	return g, stats, nil
}
