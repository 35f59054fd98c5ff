package afsai

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
)

// scaleLimit bounds the diagonal of a matrix that the set-up takes as it
// is: outside [1/scaleLimit, scaleLimit] (about 1e-12 to 1e12; every
// stored test matrix lies within) the set-up runs on the symmetrically
// scaled matrix. float32 holds about 1e-38 to 3e38, and the dense
// factorizations multiply entries.
const scaleLimit = 0x1p40

// diagonalScaling returns this rank's entries of s = diag(A)^-1/2 when the
// set-up must run on S A S (unit diagonal, every entry in [-1, 1] for an
// SPD A): some diagonal entry lies outside [1/scaleLimit, scaleLimit]. It
// returns nil when every diagonal entry lies within, and when some is not
// positive and finite (the set-up then says which) or a rank does not
// hold its diagonal block. The common case, no scaling, takes the range
// that dsmat recorded where it wrote the values (Matrix.DiagonalRange):
// no pass over the matrix. Collective.
func diagonalScaling(A *dsmat.Matrix) ([]float64, error) {
	ext := []float64{math.Inf(-1), 0, 0} // -min, max, and 1 where a rank cannot scale
	if A.Diag == nil {
		ext[2] = 1
	} else if lo, hi, ok := A.DiagonalRange(); !ok {
		ext[2] = 1
	} else {
		ext[0], ext[1] = -lo, hi
	}
	if err := comm.Allreduce(A.Comm, comm.Max, ext); err != nil {
		return nil, fmt.Errorf("afsai: diagonal range: %w", err)
	}
	if ext[2] != 0 || (-ext[0] >= 1/scaleLimit && ext[1] <= scaleLimit) {
		return nil, nil
	}
	d := A.Diagonal()
	for i, v := range d {
		d[i] = 1 / math.Sqrt(v)
	}
	return d, nil
}

// newScaled sets up the FSAI factor G~ of S A S, S = diag(s), and keeps s:
// the factor of A is G = G~ S, and Apply computes z = S G~' G~ S r. FSAI
// is invariant under this scaling (G~ S is the FSAI factor of A on the
// same pattern; the adaptive set-up ranks by |gradient|/sqrt(a_jj) and the
// static one sparsifies on the scaled matrix), so this changes the
// rounding, not the preconditioner; it lets any SPD matrix whose entries
// are finite doubles set up in float32. Collective.
func newScaled(A *dsmat.Matrix, be backend.Backend, s []float64, cfg Config) (*Preconditioner, error) {
	As, err := A.ScaledSymmetric(s)
	if err != nil {
		return nil, fmt.Errorf("afsai: scale the matrix: %w", err)
	}
	p, err := newOn(As, be, nil, cfg)
	if err != nil {
		return nil, err
	}
	scale, err := be.NewVector(len(s))
	if err == nil {
		be.Upload(scale, s)
		err = be.Sync()
	}
	if err := A.Comm.Agree(err); err != nil {
		if scale != nil {
			scale.Free()
		}
		p.Free()
		return nil, fmt.Errorf("afsai: scaling vector: %w", err)
	}
	p.scale = scale
	p.Info.Scaled = true
	return p, nil
}

// scaleRows sets z = S r for a preconditioner set up on S A S; it returns
// r itself (and leaves z alone) for one set up on A.
func (p *Preconditioner) scaleRows(z, r *ddmat.Dense) *ddmat.Dense {
	if p.scale == nil {
		return r
	}
	ddmat.ScaleRows(z, p.scale, r)
	return z
}
