package solver

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/twolevel"
)

// Matrix is a distributed sparse symmetric positive definite matrix: each
// rank holds the rows it passed to NewMatrix. Its pattern is fixed; its
// values change with Solver.SetValues and Solver.UpdateValues.
type Matrix struct {
	a    *dsmat.Matrix
	rows *dsmat.Rows // the stripe with columns sorted; Val holds the current values
	// perm is nil when the caller gave every row's columns in ascending
	// order; otherwise entry k of rows is entry perm[k] of the caller's.
	perm []int
	// diag holds, for each row, the caller's index of its diagonal entry,
	// -1 where the row has none
	diag     []int
	localNNZ int
	// geom places the rows in space for a coarse space (SetGeometry), or
	// is nil
	geom *twolevel.Geometry
}

// SetGeometry places this rank's rows in space, for the coarse space
// (Options.Coarse): coords holds x, y and z of each local row's node (three
// values a row, the same for the rows of one node), blockSize the unknowns
// per node, numbered node by node: 3 for displacements, whose coarse space
// is the rigid-body modes, 1 for a scalar field, whose coarse space is the
// constant. The slice is copied. It takes effect at the next set-up.
// Collective: on bad input every rank returns an error.
func (m *Matrix) SetGeometry(coords []float64, blockSize int) error {
	if !m.valid() {
		return errors.New("solver: set geometry: the matrix is nil, or not made by NewMatrix")
	}
	g := twolevel.Geometry{Coords: slices.Clone(coords), BlockSize: blockSize}
	if err := m.Comm().Agree(g.Check(m.LocalRows())); err != nil {
		return err
	}
	m.geom = &g
	return nil
}

// NewMatrix builds a distributed n x n matrix from this rank's rows, in CSR
// form with 0-based global indices: rows first..first+len(rowPtr)-2, row i
// holding columns cols[rowPtr[i-first]:rowPtr[i-first+1]] with values vals
// likewise. Both triangles are stored. Columns within a row may come in any
// order but not twice. The partition is the caller's: every rank passes at
// least one row, and the ranks' rows follow each other in rank order and
// cover 0..n-1. The slices are copied. Collective over c: on bad input every
// rank returns an error, the rank that found it a description and the
// others comm.ErrPeer.
func NewMatrix(c *comm.Comm, n, first int64, rowPtr, cols []int64, vals []float64) (*Matrix, error) {
	if c == nil {
		return nil, errors.New("solver: new matrix: the communicator is nil")
	}
	m, err := newStripe(n, first, rowPtr, cols, vals)
	if err := c.Agree(err); err != nil {
		return nil, err
	}
	part, err := partition(c, n, first, m.rows.Count())
	if err := c.Agree(err); err != nil {
		return nil, err
	}
	if m.a, err = dsmat.New(c, part, m.rows); err != nil {
		return nil, fmt.Errorf("solver: %w", err)
	}
	return m, nil
}

// NewMatrixRows makes a Matrix of the stripes of part, rows being this
// rank's, as the file readers and the generated problems give them. It
// keeps no copy of rows (the matrix's blocks hold the values), so the
// values are fixed: SetValues and UpdateValues refuse the Matrix. NewMatrix
// makes one whose values change. Collective over c.
func NewMatrixRows(c *comm.Comm, part dsmat.Partition, rows *dsmat.Rows) (*Matrix, error) {
	a, err := dsmat.New(c, part, rows)
	if err != nil {
		return nil, fmt.Errorf("solver: %w", err)
	}
	return &Matrix{a: a, localNNZ: len(rows.Val)}, nil
}

// newStripe checks the caller's rows and copies them into a stripe with
// sorted columns.
func newStripe(n, first int64, rowPtr, cols []int64, vals []float64) (*Matrix, error) {
	count := len(rowPtr) - 1
	switch {
	case n < 1:
		return nil, fmt.Errorf("solver: matrix dimension %d", n)
	case count < 1:
		return nil, fmt.Errorf("solver: %d row pointers: every rank needs at least one row", len(rowPtr))
	case first < 0 || first > n-int64(count):
		return nil, fmt.Errorf("solver: rows [%d,%d) are not within [0,%d)", first, first+int64(count), n)
	case rowPtr[0] != 0 || rowPtr[count] != int64(len(cols)) || len(cols) != len(vals):
		return nil, fmt.Errorf("solver: row pointers from %d to %d for %d columns and %d values",
			rowPtr[0], rowPtr[count], len(cols), len(vals))
	}
	rows := &dsmat.Rows{N: n, First: first, RowPtr: slices.Clone(rowPtr),
		Col: make([]int64, len(cols)), Val: make([]float64, len(vals))}
	m := &Matrix{rows: rows, localNNZ: len(vals)}
	var order []int // scratch: one row's entries in column order
	for i := range count {
		lo, hi := rowPtr[i], rowPtr[i+1]
		if lo > hi || hi > int64(len(cols)) {
			return nil, fmt.Errorf("solver: row %d: row pointers %d to %d for %d columns", first+int64(i), lo, hi, len(cols))
		}
		order = order[:0]
		for k := lo; k < hi; k++ {
			if cols[k] < 0 || cols[k] >= n {
				return nil, fmt.Errorf("solver: row %d: column %d is not within [0,%d)", first+int64(i), cols[k], n)
			}
			order = append(order, int(k))
		}
		byCol := func(a, b int) int { return cmp.Compare(cols[a], cols[b]) }
		if !slices.IsSortedFunc(order, byCol) {
			slices.SortFunc(order, byCol)
			if m.perm == nil {
				m.perm = make([]int, len(cols))
				for k := range m.perm[:lo] {
					m.perm[k] = k
				}
			}
		}
		for j, k := range order {
			if j > 0 && cols[k] == cols[order[j-1]] {
				return nil, fmt.Errorf("solver: row %d: column %d given twice", first+int64(i), cols[k])
			}
			rows.Col[int(lo)+j] = cols[k]
			if m.perm != nil {
				m.perm[int(lo)+j] = k
			}
		}
	}
	m.findDiagonal()
	if err := m.checkValues(vals); err != nil {
		return nil, err
	}
	m.storeValues(vals)
	return m, nil
}

// findDiagonal fills m.diag from the stripe's sorted columns.
func (m *Matrix) findDiagonal() {
	r := m.rows
	m.diag = make([]int, r.Count())
	for i := range m.diag {
		lo, hi := r.RowPtr[i], r.RowPtr[i+1]
		k, found := slices.BinarySearch(r.Col[lo:hi], r.First+int64(i))
		switch {
		case !found:
			m.diag[i] = -1
		case m.perm != nil:
			m.diag[i] = m.perm[int(lo)+k]
		default:
			m.diag[i] = int(lo) + k
		}
	}
}

// valid reports whether m was made by NewMatrix.
func (m *Matrix) valid() bool { return m != nil && m.a != nil }

// checkValues checks the caller's values (in the order given to NewMatrix):
// one per entry of the stripe, all finite, for a matrix whose values may
// change.
func (m *Matrix) checkValues(vals []float64) error {
	if m.rows == nil {
		return errors.New("solver: the matrix was made by NewMatrixRows: its values are fixed")
	}
	if len(vals) != len(m.rows.Val) {
		return fmt.Errorf("solver: %d values for a stripe of %d entries", len(vals), len(m.rows.Val))
	}
	bad := make([]int, parallel.Chunks(len(vals))) // per chunk: the first non-finite value, or -1
	parallel.For(len(vals), func(c, lo, hi int) {
		bad[c] = -1
		for k, v := range vals[lo:hi] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				bad[c] = lo + k
				return
			}
		}
	})
	for _, k := range bad {
		if k >= 0 {
			return fmt.Errorf("solver: value %d of the stripe is %g", k, vals[k])
		}
	}
	return nil
}

// checkDiagonal refuses values with a diagonal entry that the
// preconditioners' set-ups refuse: with positive (an SPD method or
// preconditioner), one that is not positive and finite, as such a matrix
// is not SPD (a float32 set-up scales a diagonal beyond float32's range to
// one, so any positive finite diagonal sets up); otherwise (Jacobi with
// BiCGSTAB or GMRES) one that is zero or not finite. Rows count from 1 in
// the message, as in Matrix Market and the command line's messages.
func (m *Matrix) checkDiagonal(vals []float64, positive bool) error {
	for i, k := range m.diag {
		var d float64
		if k >= 0 {
			d = vals[k]
		}
		g := m.rows.First + int64(i) + 1
		switch {
		case positive && (!(d > 0) || math.IsInf(d, 0)):
			return fmt.Errorf("solver: diagonal entry A(%d,%d) = %g is not positive and finite: the matrix is not SPD", g, g, d)
		case !positive && (d == 0 || !krylov.Finite(d)):
			return fmt.Errorf("solver: diagonal entry A(%d,%d) = %g is zero or not finite: Jacobi divides by it", g, g, d)
		}
	}
	return nil
}

// storeValues stores the caller's values, which checkValues accepted, in
// the stripe. It does not touch the blocks.
func (m *Matrix) storeValues(vals []float64) {
	parallel.For(len(vals), func(_, lo, hi int) {
		if m.perm == nil {
			copy(m.rows.Val[lo:hi], vals[lo:hi])
			return
		}
		for k, p := range m.perm[lo:hi] {
			m.rows.Val[lo+k] = vals[p]
		}
	})
}

// partition learns every rank's rows and checks that they follow each other
// in rank order and cover [0,n) on every rank's view of n. Collective.
func partition(c *comm.Comm, n, first int64, count int) (dsmat.Partition, error) {
	np, me := c.Size(), c.Rank()
	counts := make([]int64, np)
	counts[me] = int64(count)
	if err := comm.Allreduce(c, comm.Sum, counts); err != nil {
		return dsmat.Partition{}, fmt.Errorf("solver: partition: %w", err)
	}
	ns := []int64{n, -n}
	if err := comm.Allreduce(c, comm.Max, ns); err != nil {
		return dsmat.Partition{}, fmt.Errorf("solver: partition: %w", err)
	}
	if ns[0] != n || -ns[1] != n {
		return dsmat.Partition{}, fmt.Errorf("solver: rank %d has dimension %d, others from %d to %d", me, n, -ns[1], ns[0])
	}
	off := make([]int64, np+1)
	for p, k := range counts {
		off[p+1] = off[p] + k
	}
	switch {
	case first != off[me]:
		return dsmat.Partition{}, fmt.Errorf("solver: rank %d starts at row %d, but the rows of ranks before it end at %d: ranks must pass consecutive rows in rank order",
			me, first, off[me])
	case me == np-1 && off[np] != n:
		return dsmat.Partition{}, fmt.Errorf("solver: the rows of the last rank end at %d, but the matrix has dimension %d", off[np], n)
	}
	return dsmat.Partition{Offsets: off}, nil
}

// N is the global dimension.
func (m *Matrix) N() int64 { return m.a.N() }

// NNZ is the global number of stored entries.
func (m *Matrix) NNZ() int64 { return m.a.NNZ() }

// First is the global index of this rank's first row.
func (m *Matrix) First() int64 { return m.a.First() }

// LocalRows is the number of rows this rank holds: the length of the
// vectors Solve takes on it.
func (m *Matrix) LocalRows() int { return m.a.LocalRows() }

// LocalNNZ is the number of entries this rank holds: the length of the value
// slices SetValues and UpdateValues take on it.
func (m *Matrix) LocalNNZ() int { return m.localNNZ }

// Comm is the matrix's communicator.
func (m *Matrix) Comm() *comm.Comm { return m.a.Comm }
