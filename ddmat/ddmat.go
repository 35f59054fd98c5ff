// Package ddmat is the distributed dense matrix (DDMat) of the blueprint,
// section 4.1: a stripe of consecutive rows per rank, stored row-wise on the
// rank's backend, with Cols columns. With one column it is a distributed
// vector, which is what PCG works on.
//
// Reductions (dot products, norms) add the local results of every rank with
// one Allreduce; a solver that needs several of them per step combines them
// with Sum to pay one latency.
package ddmat

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
)

// Dense is one rank's stripe of a distributed dense matrix.
type Dense struct {
	Comm *comm.Comm
	BE   backend.Backend
	Rows int // local rows
	Cols int
	V    backend.Vector // Rows*Cols values, row-major
}

// New allocates a zero stripe of rows x cols on be.
func New(c *comm.Comm, be backend.Backend, rows, cols int) (*Dense, error) {
	v, err := be.NewVector(rows * cols)
	if err != nil {
		return nil, fmt.Errorf("ddmat: allocate %d x %d: %w", rows, cols, err)
	}
	be.Fill(v, 0)
	return &Dense{Comm: c, BE: be, Rows: rows, Cols: cols, V: v}, nil
}

// NewVector allocates a zero distributed vector with rows local entries.
func NewVector(c *comm.Comm, be backend.Backend, rows int) (*Dense, error) {
	return New(c, be, rows, 1)
}

// Free releases the device memory.
func (d *Dense) Free() { d.V.Free() }

// Set copies host values (row-major) into the stripe.
func (d *Dense) Set(host []float64) error {
	if len(host) != d.V.Len() {
		return fmt.Errorf("ddmat: set %d values into a stripe of %d", len(host), d.V.Len())
	}
	d.BE.Upload(d.V, host)
	return d.BE.Sync()
}

// Get copies the stripe into host memory.
func (d *Dense) Get(host []float64) error { return d.BE.Download(host, d.V) }

// Sum adds each local value over all ranks: the one Allreduce behind every
// global dot product and norm.
func Sum(c *comm.Comm, local ...float64) ([]float64, error) {
	if err := comm.Allreduce(c, comm.Sum, local); err != nil {
		return nil, fmt.Errorf("ddmat: allreduce: %w", err)
	}
	return local, nil
}

// Dot returns the global x'y of two vectors.
func Dot(x, y *Dense) (float64, error) {
	local := backend.Dot(x.BE, x.V, y.V)
	if err := x.BE.Err(); err != nil {
		return 0, err
	}
	s, err := Sum(x.Comm, local)
	if err != nil {
		return 0, err
	}
	return s[0], nil
}

// Norm returns the global 2-norm of x.
func Norm(x *Dense) (float64, error) {
	s, err := Dot(x, x)
	return math.Sqrt(s), err
}

// Axpby sets y = a*x + b*y.
func Axpby(y *Dense, a float64, x *Dense, b float64) { backend.Axpby(y.BE, y.V, a, x.V, b) }

// Copy sets dst = src.
func Copy(dst, src *Dense) { dst.BE.Copy(dst.V, src.V) }

// LocalDots sets out[c] to this rank's part of the dot product of columns c
// of x and y; len(out) is their number of columns.
func LocalDots(x, y *Dense, out []float64) { x.BE.DotCols(x.V, y.V, out) }

// Norms returns the global 2-norm of every column of x. The plain sum of
// squares (one Allreduce) serves every vector whose norm squared is a normal
// float64; where the global sum overflows, underflows to zero or loses bits
// as a subnormal number, the norms are computed again from the vector
// scaled by a power of two (the scaled sum of LAPACK's dnrm2), so that a
// vector of entries 1e-200 or 1e200 has its representable norm. Every rank
// sees the same global sums and so takes the same path.
func Norms(x *Dense) ([]float64, error) {
	s, err := sumSquares(x, x)
	if err != nil {
		return nil, err
	}
	scale, redo := make([]float64, len(s)), false
	for c, v := range s {
		scale[c] = 1
		switch {
		case math.IsInf(v, 1):
			scale[c], redo = 0x1p-600, true
		case v < smallestNormal:
			scale[c], redo = 0x1p600, true
		}
	}
	if redo {
		if s, err = scaledSumSquares(x, scale); err != nil {
			return nil, err
		}
	}
	for c, v := range s {
		s[c] = math.Sqrt(v) / scale[c]
	}
	return s, nil
}

// smallestNormal is the smallest positive normal float64, 2^-1022.
const smallestNormal = 0x1p-1022

// sumSquares returns the global dot products of the columns of x and y.
func sumSquares(x, y *Dense) ([]float64, error) {
	local := make([]float64, x.Cols)
	LocalDots(x, y, local)
	if err := x.BE.Err(); err != nil {
		return nil, err
	}
	return Sum(x.Comm, local...)
}

// scaledSumSquares returns the global sums of squares of the columns of x,
// column c scaled by scale[c], a power of two: 2^600 lifts entries whose
// squares underflow, 2^-600 brings entries whose squares overflow into
// range (an entry it takes below 2^-1074 is under 2^-474 times the
// largest, which does not change the sum). Collective, on the rare path
// only: it allocates the scaled copy.
func scaledSumSquares(x *Dense, scale []float64) ([]float64, error) {
	tmp, err := New(x.Comm, x.BE, x.Rows, x.Cols)
	if err := x.Comm.Agree(err); err != nil {
		if tmp != nil {
			tmp.Free()
		}
		return nil, err
	}
	defer tmp.Free()
	AxpbyCols(tmp, scale, x, make([]float64, x.Cols))
	return sumSquares(tmp, tmp)
}

// ScaleRows sets z[i,c] = d[i]*r[i,c]: one diagonal scaling of every column.
func ScaleRows(z *Dense, d backend.Vector, r *Dense) { z.BE.MulCols(z.V, d, r.V, r.Cols) }

// AxpbyCols sets y[:,c] = a[c]*x[:,c] + b[c]*y[:,c] for every column c.
func AxpbyCols(y *Dense, a []float64, x *Dense, b []float64) { y.BE.AxpbyCols(y.V, a, x.V, b) }
