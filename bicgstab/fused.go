package bicgstab

import (
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/krylov"
)

// Fused is the optional interface of a backend that runs BiCGSTAB's vector
// updates as fused kernels, each one pass over its vectors, with the
// reductions that follow each update taken in the same pass and a diagonal
// preconditioner (Jacobi) applied in it. The cpu and gpu backends
// implement it; BiCGSTAB asks for it and, on a backend without it, runs
// the same updates from the backend's block operations and the
// preconditioner's Apply, which give the same iterates up to rounding.
type Fused interface {
	// BiCGSTABDirection sets p = r + beta*(p - omega*v), or p = r where
	// beta is 0 (p and v are then not read, and may hold NaN); where d is
	// not nil, it also sets ph = d .* p in the same pass.
	BiCGSTABDirection(p, r, v backend.Vector, beta, omega float64, d, ph backend.Vector)
	// BiCGSTABHalf sets s = r - alpha*v and returns the local s's; where d
	// is not nil, it also sets sh = d .* s in the same pass.
	BiCGSTABHalf(s, r, v backend.Vector, alpha float64, d, sh backend.Vector) float64
	// BiCGSTABStep sets x += alpha*ph + omega*sh and r = s - omega*t, and
	// returns the local r'r and r'rhat of the new r, in one pass. NaNs
	// once an error is recorded.
	BiCGSTABStep(x, ph, sh backend.Vector, alpha, omega float64, r, s, t, rhat backend.Vector) (rr, rrhat float64)
}

// scaling returns the preconditioner's diagonal where the backend fuses
// BiCGSTAB's updates and M is diagonal (Jacobi), nil otherwise: then M is
// applied by its Apply.
func (w *Workspace) scaling(M krylov.Preconditioner) backend.Vector {
	if d, ok := M.(krylov.Diagonal); ok && w.fused != nil {
		return d.Scaling()
	}
	return nil
}

// newDirection sets p = r + beta (p - omega v), or p = r where beta is 0,
// and ph = M^{-1} p.
func (w *Workspace) newDirection(M krylov.Preconditioner, beta, omega float64) error {
	d := w.scaling(M)
	switch {
	case d != nil:
		w.fused.BiCGSTABDirection(w.p.V, w.r.V, w.v.V, beta, omega, d, w.ph.V)
		return nil
	case w.fused != nil:
		w.fused.BiCGSTABDirection(w.p.V, w.r.V, w.v.V, beta, omega, nil, nil)
	case beta == 0:
		ddmat.Copy(w.p, w.r)
	default:
		ddmat.Axpby(w.p, -omega, w.v, 1)
		ddmat.Axpby(w.p, 1, w.r, beta)
	}
	return M.Apply(w.ph, w.p)
}

// half sets s = r - alpha v and sh = M^{-1} s, and returns the local s's.
func (w *Workspace) half(M krylov.Preconditioner, alpha float64) (float64, error) {
	be := w.s.BE
	d := w.scaling(M)
	var ss float64
	switch {
	case d != nil:
		return w.fused.BiCGSTABHalf(w.s.V, w.r.V, w.v.V, alpha, d, w.sh.V), nil
	case w.fused != nil:
		ss = w.fused.BiCGSTABHalf(w.s.V, w.r.V, w.v.V, alpha, nil, nil)
	default:
		ddmat.Copy(w.s, w.r)
		ddmat.Axpby(w.s, -alpha, w.v, 1)
		local := []float64{0}
		be.DotCols(w.s.V, w.s.V, local)
		ss = local[0]
	}
	return ss, M.Apply(w.sh, w.s)
}

// step sets x += alpha M^{-1} p + omega M^{-1} s and r = s - omega t, and
// returns the local r'r and r'r0^.
func (w *Workspace) step(x *ddmat.Dense, alpha, omega float64) (rr, rrhat float64) {
	if w.fused != nil {
		return w.fused.BiCGSTABStep(x.V, w.ph.V, w.sh.V, alpha, omega, w.r.V, w.s.V, w.t.V, w.rhat.V)
	}
	ddmat.Axpby(x, alpha, w.ph, 1)
	ddmat.Axpby(x, omega, w.sh, 1)
	ddmat.Axpby(w.s, -omega, w.t, 1)
	w.r, w.s = w.s, w.r
	sums := []float64{0, 0}
	x.BE.DotPairCols(w.r.V, w.r.V, w.rhat.V, sums[:1], sums[1:])
	return sums[0], sums[1]
}
