package pcg

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/krylov"
)

// Single-reduction CG (Chronopoulos and Gear; PETSc's
// -ksp_cg_single_reduction) reorders PCG so that an iteration's three dot
// products are taken together, after its one product with A and one
// application of M, and cross the ranks in one Allreduce instead of two:
//
//	p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s
//	u = M r, w = A u
//	gamma = r'u, delta = u'w, rr = r'r                 (one Allreduce)
//	beta = gamma/gamma_old, alpha = gamma/(delta - beta gamma/alpha_old)
//
// The denominator is the p'Ap of the new direction, checked as PCG checks
// it (denominators). It keeps one vector more than PCG (s = A p) and updates two more per
// iteration; in finite precision it may take a few more iterations.

// SingleFused is the optional interface of a backend that runs
// single-reduction CG's vector work fused, adding the iteration's dot
// products on the device to a backend.Sum that the iteration reads once,
// so that it waits for the device once. The 3k sums of a block of k
// columns hold u'w of column c at c (added by the product with A:
// SumOperator), r'u at k+c and r'r at 2k+c. The cpu and gpu backends
// implement it; on a backend without it (or an operator that is not a
// SumOperator) single-reduction CG runs the same steps from the block
// operations.
type SingleFused interface {
	// UpdateSRCols is one pass over row-major blocks of k = len(a)
	// columns: p[:,c] = u[:,c] + b[c]*p[:,c] and s[:,c] = w[:,c] +
	// b[c]*s[:,c] (p and s are not read where b[c] == 0, as in
	// AxpbyCols), then x[:,c] += a[c]*p[:,c] and r[:,c] -= a[c]*s[:,c].
	// With a diagonal preconditioner d (not nil) it also sets u[i,c] =
	// d[i]*r[i,c] and adds the local r'u and r'r of column c, after the
	// update, to sums k+c and 2k+c of sum; with d nil it leaves u and sum
	// as they are. It does not wait for the device.
	UpdateSRCols(x, r, p, s, u, w, d backend.Vector, a, b []float64, sum backend.Sum)
	// DotsSRCols adds the local r'u and r'r of column c to sums k+c and
	// 2k+c of sum, for blocks of k columns (after a preconditioner's u = M
	// r), without waiting for the device.
	DotsSRCols(r, u backend.Vector, k int, sum backend.Sum)
}

// SumOperator is an operator whose product adds its dot products to a
// backend.Sum without waiting for them (dsmat.Operator): ApplyDotsTo sets
// Y = A X and adds this rank's part of X[:,c]'Y[:,c] to sum c of s, for k
// columns.
type SumOperator interface {
	ApplyDotsTo(y, x backend.Vector, k int, s backend.Sum) error
}

// single is single-reduction CG's state beyond PCG's vectors, whose roles
// it takes: r, u = M r in z, w = A u in q, p.
type single struct {
	s     *ddmat.Dense // A p
	fused SingleFused  // nil: the block operations and host dots
	op    SumOperator  // nil: ApplyDots
	sum   backend.Sum  // the 3k sums of the fused steps; nil without them
	// ones and -alpha of the k columns, for the steps without fused ones
	ones, negAlpha []float64
}

func (sr *single) free() {
	if sr == nil {
		return
	}
	if sr.s != nil {
		sr.s.Free()
	}
	if sr.sum != nil {
		sr.sum.Free()
	}
}

// NewSingleReductionWorkspace is NewWorkspace for single-reduction CG:
// its solves take the iteration's three dot products together and cross
// the ranks once per iteration instead of twice (the other solves' stop
// rule, results and callbacks), at the cost of one more vector shaped
// like b.
func NewSingleReductionWorkspace(A krylov.Operator, b *ddmat.Dense) (*Workspace, error) {
	s, err := NewWorkspace(A, b)
	if err != nil {
		return nil, err
	}
	sr := &single{ones: make([]float64, b.Cols), negAlpha: make([]float64, b.Cols)}
	for c := range sr.ones {
		sr.ones[c] = 1
	}
	s.single = sr
	if sr.s, err = ddmat.New(b.Comm, b.BE, b.Rows, b.Cols); err != nil {
		s.Free()
		return nil, fmt.Errorf("pcg: %w", err)
	}
	sr.fused, _ = b.BE.(SingleFused)
	sr.op, _ = A.(SumOperator)
	if sr.fused != nil && sr.op != nil {
		if sr.sum, err = b.BE.NewSum(3 * b.Cols); err != nil {
			s.Free()
			return nil, fmt.Errorf("pcg: %w", err)
		}
	}
	return s, nil
}

// runSingle is single-reduction CG on the columns of b, whose norms are
// bnorm, each solved scaled by scale (x already is): run's columns, stop
// rule and checks, with one reduction per iteration.
func (s *Workspace) runSingle(M Preconditioner, b, x *ddmat.Dense, bnorm, scale []float64, opt Options) ([]Result, error) {
	k := b.Cols
	cols, fixed := begin(x, bnorm, scale, opt)
	if !anyActive(cols) {
		return results(cols), fixed.apply()
	}
	if err := s.trueResidual(s.r, b, x, scale); err != nil {
		return nil, err
	}
	rnorm, err := ddmat.Norms(s.r)
	if err != nil {
		return nil, err
	}
	local := make([]float64, 3*k+1)
	if err := s.products(M, local, false); err != nil {
		return nil, err
	}
	sums, err := s.reduce(local, opt)
	if err != nil {
		return nil, err
	}
	start(cols, rnorm, sums[k:2*k], opt)
	delta := append([]float64(nil), sums[:k]...)
	stop := sums[3*k]

	// beta = 0 restarts the directions: p = u, s = w.
	alpha, beta, pq := make([]float64, k), make([]float64, k), make([]float64, k)
	for it := 1; ; it++ {
		if err := s.confirmSingle(M, b, x, cols, scale, it, delta, beta); err != nil {
			return nil, err
		}
		if !checkAll(cols, fixed, it, stop) {
			return results(cols), fixed.apply()
		}
		denominators(pq, delta, alpha, beta, cols)
		if !steps(cols, fixed, it, pq, alpha) {
			return results(cols), fixed.apply()
		}
		if err := s.stepSingle(M, x, alpha, beta, local); err != nil {
			return nil, err
		}
		if sums, err = s.reduce(local, opt); err != nil {
			return nil, err
		}
		stop = sums[3*k]
		copy(delta, sums[:k])
		worst := record(cols, it, sums[2*k:3*k], sums[k:2*k], beta, opt)
		if err := s.monitor(b, x, cols, bnorm, scale, it, worst, opt); err != nil {
			return nil, err
		}
	}
}

// denominators sets pq[c] to the p'Ap of column c's next direction, from
// the recurrence: delta - beta*gamma/alpha, with gamma = r'u (col.rz),
// delta = u'Au and the previous alpha; delta itself where beta is 0 (p =
// u). Where rounding has made the recurrence's value zero or negative
// while delta is positive (the cancellation of an ill-conditioned system),
// the column restarts its directions instead (beta = 0, pq = delta), as
// PCG's directly computed p'Ap would not have failed there.
func denominators(pq, delta, alpha, beta []float64, cols []column) {
	for c := range cols {
		pq[c] = delta[c]
		if beta[c] == 0 {
			continue
		}
		pq[c] -= beta[c] * cols[c].rz / alpha[c]
		if pq[c] <= 0 && delta[c] > 0 {
			pq[c], beta[c] = delta[c], 0
		}
	}
}

// reduce sums local's 3k dot products (u'w, r'u, r'r of every column) and
// this rank's stop vote, in its last entry, over the ranks: the
// iteration's one Allreduce.
func (s *Workspace) reduce(local []float64, opt Options) ([]float64, error) {
	local[len(local)-1] = opt.StopVote()
	return ddmat.Sum(s.r.Comm, local...)
}

// stepSingle is the iteration's vector work: p = u + beta p, s = w + beta
// s, x += alpha p, r -= alpha s, then products. On a SingleFused backend
// the updates are one pass, and a diagonal preconditioner's u = d .* r and
// its dots go with them.
func (s *Workspace) stepSingle(M Preconditioner, x *ddmat.Dense, alpha, beta, local []float64) error {
	sr, r, u, w, p := s.single, s.r, s.z, s.q, s.p
	if sr.sum != nil {
		d, diagonal := M.(Diagonal)
		var dv backend.Vector
		if diagonal {
			dv = d.Scaling()
		}
		sr.fused.UpdateSRCols(x.V, r.V, p.V, sr.s.V, u.V, w.V, dv, alpha, beta, sr.sum)
		return s.products(M, local, diagonal)
	}
	ones, negAlpha := sr.ones, sr.negAlpha
	for c, a := range alpha {
		negAlpha[c] = -a
	}
	ddmat.AxpbyCols(p, ones, u, beta)
	ddmat.AxpbyCols(sr.s, ones, w, beta)
	ddmat.AxpbyCols(x, alpha, p, ones)
	ddmat.AxpbyCols(r, negAlpha, sr.s, ones)
	return s.products(M, local, false)
}

// products sets u = M r (unless applied says the fused update has) and w
// = A u, and leaves the local u'w, r'u and r'r of the k columns in
// local[:3k]. With the fused steps they gather in the device's sums and
// are read with one wait; otherwise the product and the dots return
// theirs.
func (s *Workspace) products(M Preconditioner, local []float64, applied bool) error {
	sr, r, u, w := s.single, s.r, s.z, s.q
	k := r.Cols
	if !applied {
		if err := M.Apply(u, r); err != nil {
			return err
		}
	}
	if sr.sum != nil {
		if !applied {
			sr.fused.DotsSRCols(r.V, u.V, k, sr.sum)
		}
		err := sr.op.ApplyDotsTo(w.V, u.V, k, sr.sum)
		// taken also after a failure: no partial sums left for the next call
		if terr := r.BE.TakeSum(sr.sum, local[:3*k]); err == nil {
			err = terr
		}
		return err
	}
	if err := s.A.ApplyDots(w.V, u.V, local[:k]); err != nil {
		return err
	}
	r.BE.DotPairCols(r.V, u.V, r.V, local[k:2*k], local[2*k:3*k])
	return r.BE.Err()
}

// confirmSingle is confirm for single-reduction CG: the true residual goes
// to the spare vector, and a column whose r it replaces restarts from it:
// u = M r, w = A u, its r'u and u'w, and beta = 0 (p = u, s = w at the
// next step).
func (s *Workspace) confirmSingle(M Preconditioner, b, x *ddmat.Dense, cols []column, scale []float64, it int, delta, beta []float64) error {
	if !anyNeedsTrue(cols) {
		return nil
	}
	t, err := s.spare()
	if err != nil {
		return err
	}
	replace, _, err := s.replace(b, x, cols, scale, it, t)
	if replace == nil || err != nil {
		return err
	}
	k := len(cols)
	local := make([]float64, 3*k)
	if err := s.products(M, local, false); err != nil {
		return err
	}
	sums, err := ddmat.Sum(s.r.Comm, local...)
	if err != nil {
		return err
	}
	for c := range cols {
		if replace[c] == 1 {
			cols[c].rz, delta[c], beta[c] = sums[k+c], sums[c], 0
		}
	}
	return nil
}
