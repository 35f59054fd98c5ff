// Package precond holds the preconditioners that every Krylov method can
// use and that need no set-up package of their own: None (the identity)
// and Jacobi (the inverse diagonal, a krylov.Diagonal that methods fuse
// into their vector updates). The FSAI preconditioners are package afsai.
package precond

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
)

// None is the identity preconditioner: plain CG.
type None struct{}

func (None) Name() string                  { return "none" }
func (None) Apply(z, r *ddmat.Dense) error { ddmat.Copy(z, r); return nil }
func (None) Free()                         {}

// Jacobi scales by the inverse of the matrix diagonal.
type Jacobi struct {
	inv backend.Vector
	be  backend.Backend
}

// NewJacobi sets up the Jacobi preconditioner of A on be for a method that
// needs an SPD preconditioner (CG). A diagonal entry that is not positive
// cannot belong to an SPD matrix and is an error; so is one whose inverse
// overflows (below 2^-1024, a subnormal number).
func NewJacobi(A *dsmat.Matrix, be backend.Backend) (*Jacobi, error) { return newJacobi(A, be, true) }

// NewJacobiNonzero is NewJacobi for a method that needs no SPD
// preconditioner (BiCGSTAB, GMRES): a diagonal entry of either sign is
// taken, a zero one (or NaN) is an error.
func NewJacobiNonzero(A *dsmat.Matrix, be backend.Backend) (*Jacobi, error) {
	return newJacobi(A, be, false)
}

// newJacobi is NewJacobi, which takes a negative diagonal entry unless
// positive.
func newJacobi(A *dsmat.Matrix, be backend.Backend, positive bool) (*Jacobi, error) {
	d := A.Diagonal()
	var bad error
	for i, v := range d {
		switch {
		case positive && !(v > 0):
			bad = fmt.Errorf("jacobi: diagonal entry %g at row %d is not positive: the matrix is not SPD", v, A.First()+int64(i)+1)
		case !positive && (v == 0 || math.IsNaN(v)):
			bad = fmt.Errorf("jacobi: diagonal entry %g at row %d: Jacobi divides by it", v, A.First()+int64(i)+1)
		}
		if bad != nil {
			break
		}
		d[i] = 1 / v
		if math.IsInf(d[i], 0) {
			bad = fmt.Errorf("jacobi: diagonal entry %g at row %d has no finite inverse: scale the system", v, A.First()+int64(i)+1)
			break
		}
	}
	if err := A.Comm.Agree(bad); err != nil {
		return nil, err
	}
	inv, err := be.NewVector(len(d))
	if err != nil {
		return nil, fmt.Errorf("jacobi: %w", err)
	}
	be.Upload(inv, d)
	if err := be.Sync(); err != nil {
		inv.Free()
		return nil, fmt.Errorf("jacobi: %w", err)
	}
	return &Jacobi{inv: inv, be: be}, nil
}

func (j *Jacobi) Name() string { return "jacobi" }

func (j *Jacobi) Apply(z, r *ddmat.Dense) error {
	ddmat.ScaleRows(z, j.inv, r)
	return nil
}

// Scaling returns the inverse diagonal, for the methods' fused updates
// (krylov.Diagonal).
func (j *Jacobi) Scaling() backend.Vector { return j.inv }

// ApplyBytes is what one application to k columns must move on this rank:
// the inverse diagonal read once, each column of r read and of z written
// once.
func (j *Jacobi) ApplyBytes(k int) int64 {
	return 8*int64(j.inv.Len()) + 16*int64(j.inv.Len())*int64(k)
}

func (j *Jacobi) Free() { j.inv.Free() }
