// Package bicgstab solves distributed nonsymmetric systems A x = b by
// BiCGSTAB (van der Vorst), right preconditioned: it iterates on A M^{-1}
// u = b with x = M^{-1} u, so the residual it monitors is the true,
// unpreconditioned b - A x, which krylov.Monitor judges as it does for
// every method. It is written once against the backend interface and runs
// on CPUs and GPUs alike.
//
// One iteration costs two products with A, two applications of M^{-1}
// and three global reductions (Allreduce), each combining what one point
// of the iteration needs:
//
//  1. (r0^, v) and (v, v), for alpha and the breakdown guard;
//  2. (s, s), (t, s) and (t, t) together, for omega and the early exit
//     on ||s|| (checked once t = A M^{-1} s is known, which spends one
//     product and one application in the last iteration only);
//  3. (r, r), (r0^, r) and the ranks' stop votes together, for the
//     residual estimate and the next rho.
//
// On a backend with the fused updates (Fused: the cpu and gpu backends)
// the vector work of an iteration is three passes and two dot products,
// with Jacobi applied inside the passes; in vectors of n float64 read or
// written (8n bytes each), with Jacobi:
//
//	p = r + beta (p - omega v), ph = D^-1 p   read r, p, v, D^-1; write p, ph  6
//	v = A ph                                  (SpMV)
//	(r0^, v), (v, v)                          read r0^, v                      2
//	s = r - alpha v, sh = D^-1 s, (s, s)      read r, v, D^-1; write s, sh     5
//	t = A sh                                  (SpMV)
//	(t, s), (t, t)                            read t, s                        2
//	x += alpha ph + omega sh,
//	r = s - omega t, (r, r), (r0^, r)         read x, ph, sh, s, t, r0^;       8
//	                                          write x, r
//
// 23 passes and two SpMVs (scripts/bench-nonsym-gpu.sh counts these bytes).
// With another preconditioner the updates leave out D^-1 and its output,
// and M's Apply reads p (s) and writes ph (sh). Without Fused, the same
// updates are block operations (Copy, Axpby, DotCols, DotPairCols) and
// Apply: 33 passes with Jacobi.
//
// The breakdown guards test each quotient's divisor for zero to working
// precision (the cosine of the two vectors' angle below cosTol). A shadow
// residual orthogonal to r (rho = (r0^, r) = 0) or to v ((r0^, v) = 0)
// restarts the recurrence from r with r as the new shadow residual, within
// the iteration: near convergence on add32 with Jacobi, rho falls to 4e-16
// times ||r0^|| ||r||, and the restart converges. Where the shadow is
// already r (the first iteration, or just after a restart) no new one can
// help, and the solve stops with reason breakdown and a detail: a
// skew-symmetric A has (r0, A r0) = 0. omega = 0 ((t, s) = 0, or t = 0
// while s is not) stops the solve likewise. The iterate is then the last
// complete iteration's, never NaN. A residual replacement (the estimate
// met the tolerance, the true residual did not) restarts the recurrence
// from the true residual, with it as the new shadow residual.
//
// BiCGSTAB solves one right-hand side at a time: a block of several is an
// error (NewWorkspace).
package bicgstab

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/krylov"
)

// Workspace holds BiCGSTAB's work vectors for solves with one operator.
type Workspace struct {
	A                           krylov.Operator
	r, rhat, p, v, s, t, ph, sh *ddmat.Dense
	fused                       Fused // the backend's fused updates; nil: none
}

// NewWorkspace allocates the work vectors for A, shaped like b, which must
// have one column.
func NewWorkspace(A krylov.Operator, b *ddmat.Dense) (*Workspace, error) {
	if b.Cols != 1 {
		return nil, fmt.Errorf("bicgstab: %d right-hand sides: BiCGSTAB solves one at a time", b.Cols)
	}
	w := &Workspace{A: A}
	w.fused, _ = b.BE.(Fused)
	for _, v := range w.vectors() {
		d, err := ddmat.NewVector(b.Comm, b.BE, b.Rows)
		if err != nil {
			w.Free()
			return nil, fmt.Errorf("bicgstab: %w", err)
		}
		*v = d
	}
	return w, nil
}

func (w *Workspace) vectors() []**ddmat.Dense {
	return []**ddmat.Dense{&w.r, &w.rhat, &w.p, &w.v, &w.s, &w.t, &w.ph, &w.sh}
}

// Free releases the work vectors.
func (w *Workspace) Free() {
	for _, v := range w.vectors() {
		if *v != nil {
			(*v).Free()
		}
	}
}

// SolveBlock solves for b's one column; it returns one Result. A
// right-hand side whose norm lies outside [2^-64, 2^64] is solved scaled
// by a power of two (krylov.Scales).
func (w *Workspace) SolveBlock(M krylov.Preconditioner, b, x *ddmat.Dense, opt krylov.Options) ([]krylov.Result, error) {
	return krylov.SolveOne("bicgstab", w.A, b, x, w.r, w.t, opt, func(bnorm float64, scale []float64) (krylov.Result, error) {
		return w.run(M, b, x, bnorm, scale, opt)
	})
}

// state is the recurrence's scalars; fresh means it (re)starts from r,
// with r as its shadow residual.
type state struct {
	bnorm                     float64 // ||b|| times its scale
	rho, rhoOld, alpha, omega float64
	rnorm, rhatNorm           float64 // ||r||, ||r0^||
	fresh                     bool
	stop                      float64 // the ranks' stop votes
	mon                       krylov.Monitor
}

// restart starts the recurrence from r, of norm rnorm, with r as the
// shadow residual.
func (st *state) restart(rnorm float64) {
	st.rho, st.rnorm, st.rhatNorm, st.fresh = rnorm*rnorm, rnorm, rnorm, true
}

// orthogonal reports whether the inner product d of two vectors of norms
// a and b is zero to working precision: |d| <= cosTol a b.
func orthogonal(d, a, b float64) bool { return math.Abs(d) <= cosTol*a*b }

// cosTol is the cosine of the angle between two vectors below which they
// count as orthogonal, and a quotient by their inner product as a
// breakdown: about 450 times the unit roundoff, above the rounding of a
// dot product that is zero in exact arithmetic (a skew-symmetric A has
// (r, A r) = 0).
const cosTol = 1e-13

// run is BiCGSTAB on scale*b from the (scaled) x.
func (w *Workspace) run(M krylov.Preconditioner, b, x *ddmat.Dense, bnorm float64, scale []float64, opt krylov.Options) (krylov.Result, error) {
	st := &state{bnorm: bnorm * scale[0]}
	rnorm, err := w.restart(b, x, scale)
	if err != nil {
		return krylov.Result{}, err
	}
	st.mon = krylov.NewMonitor(opt, rnorm/st.bnorm)
	st.restart(rnorm)
	for it := 1; ; it++ {
		if err := w.confirm(st, b, x, scale, it); err != nil {
			return krylov.Result{}, err
		}
		if !st.mon.Check(it, st.stop > 0) {
			return st.mon.Result, nil
		}
		if err := w.iterate(M, x, st, it, opt); err != nil {
			return krylov.Result{}, err
		}
		if !st.mon.Active() {
			return st.mon.Result, nil
		}
		if opt.Progress != nil {
			opt.Progress(it, st.mon.RecurrenceRelRes)
		}
	}
}

// restart sets r = scale*b - A x and the shadow residual r0^ = r, and
// returns ||r||.
func (w *Workspace) restart(b, x *ddmat.Dense, scale []float64) (float64, error) {
	if err := krylov.Residual(w.A, w.r, b, x, w.t, scale); err != nil {
		return 0, err
	}
	ddmat.Copy(w.rhat, w.r)
	n, err := ddmat.Norms(w.r)
	if err != nil {
		return 0, err
	}
	return n[0], nil
}

// confirm applies the stop rule's true residual check before iteration
// it: where the estimate met the tolerance, the true residual is computed
// and, when it is above the tolerance, the recurrence restarts from it
// (residual replacement).
func (w *Workspace) confirm(st *state, b, x *ddmat.Dense, scale []float64, it int) error {
	if !st.mon.NeedsTrue() {
		return nil
	}
	rnorm, err := w.restart(b, x, scale)
	if err != nil {
		return err
	}
	if st.mon.Confirm(it, rnorm/st.bnorm) {
		st.restart(rnorm)
	}
	return nil
}

// iterate runs iteration it: it moves x and r on and records the
// estimate, or stops the monitor on a breakdown (x then unchanged).
func (w *Workspace) iterate(M krylov.Preconditioner, x *ddmat.Dense, st *state, it int, opt krylov.Options) error {
	be := x.BE
	mon := &st.mon
	alpha, ok, err := w.direction(M, st, it)
	if !ok || err != nil {
		return err
	}
	st.alpha = alpha
	// s = r - alpha v, t = A M^{-1} s; (s, s), (t, s), (t, t).
	ss, err := w.half(M, alpha)
	if err != nil {
		return err
	}
	sums, err := w.product(w.t, w.sh, func() []float64 {
		ts, tt := []float64{0}, []float64{0}
		be.DotPairCols(w.t.V, w.s.V, w.t.V, ts, tt)
		return []float64{ss, ts[0], tt[0]}
	})
	if err != nil {
		return err
	}
	ss, ts, tt := sums[0], sums[1], sums[2]
	if srel := math.Sqrt(ss) / st.bnorm; krylov.Finite(srel) && srel <= opt.Tol {
		// Early exit: x + alpha M^{-1} p meets the tolerance by its
		// estimate; the stop rule checks its true residual.
		ddmat.Axpby(x, st.alpha, w.ph, 1)
		mon.Record(it, srel)
		return nil
	}
	omega := ts / tt
	switch {
	case !krylov.Finite(ss) || !krylov.Finite(omega) && tt != 0:
		mon.Stop(krylov.NaN, "(s, s) = %v, (t, s) = %v, (t, t) = %v at iteration %d", ss, ts, tt, it)
		return nil
	case tt == 0:
		mon.Stop(krylov.Breakdown, "t = A M^-1 s = 0 while ||s|| = %.3g at iteration %d: omega is undefined (A M^-1 singular)", math.Sqrt(ss), it)
		return nil
	case orthogonal(ts, math.Sqrt(tt), math.Sqrt(ss)):
		mon.Stop(krylov.Breakdown, "omega = (t, s)/(t, t) = %.3g at iteration %d: t = A M^-1 s is orthogonal to s, the stabilizing step makes no progress", omega, it)
		return nil
	}
	st.omega = omega
	// x += alpha M^{-1} p + omega M^{-1} s, r = s - omega t.
	rr, rrhat := w.step(x, st.alpha, omega)
	if err := be.Err(); err != nil {
		return err
	}
	sums, err = ddmat.Sum(x.Comm, rr, rrhat, opt.StopVote())
	if err != nil {
		return err
	}
	st.rhoOld, st.rho, st.rnorm, st.fresh = st.rho, sums[1], math.Sqrt(sums[0]), false
	st.stop = sums[2]
	mon.Record(it, math.Sqrt(sums[0])/st.bnorm)
	return nil
}

// direction sets p, M^{-1} p and v = A M^{-1} p for iteration it and
// returns alpha = rho / (r0^, v), or ok false when the monitor stopped. A
// shadow residual orthogonal to r or to v (rho or (r0^, v) zero to working
// precision) restarts the recurrence from r with r as the new shadow
// residual, within the iteration; a fresh shadow (r0^ = r) that is, stops
// the solve with reason breakdown: no new shadow can help.
func (w *Workspace) direction(M krylov.Preconditioner, st *state, it int) (alpha float64, ok bool, err error) {
	be, mon := w.r.BE, &st.mon
	for {
		switch {
		case !krylov.Finite(st.rho):
			mon.Stop(krylov.NaN, "rho = (r0^, r) = %v at iteration %d", st.rho, it)
			return 0, false, nil
		case orthogonal(st.rho, st.rhatNorm, st.rnorm) && st.fresh:
			mon.Stop(krylov.Breakdown, "rho = (r0^, r) = %.3g at iteration %d: the residual is orthogonal to the shadow residual (||r0^|| %.3g, ||r|| %.3g)",
				st.rho, it, st.rhatNorm, st.rnorm)
			return 0, false, nil
		case orthogonal(st.rho, st.rhatNorm, st.rnorm):
			w.newShadow(st)
		}
		beta := 0.0 // p = r
		if !st.fresh {
			beta = st.rho / st.rhoOld * st.alpha / st.omega
		}
		if err := w.newDirection(M, beta, st.omega); err != nil {
			return 0, false, err
		}
		rv, err := w.product(w.v, w.ph, func() []float64 {
			rv, vv := []float64{0}, []float64{0}
			be.DotPairCols(w.v.V, w.rhat.V, w.v.V, rv, vv)
			return []float64{rv[0], vv[0]}
		})
		if err != nil {
			return 0, false, err
		}
		switch vnorm := math.Sqrt(rv[1]); {
		case !krylov.Finite(rv[0]) || !krylov.Finite(rv[1]):
			mon.Stop(krylov.NaN, "(r0^, A M^-1 p) = %v at iteration %d: overflow or NaN in the product or the preconditioner", rv[0], it)
			return 0, false, nil
		case orthogonal(rv[0], st.rhatNorm, vnorm) && st.fresh:
			mon.Stop(krylov.Breakdown, "(r0^, A M^-1 p) = %.3g at iteration %d: the shadow residual is orthogonal to A M^-1 p (norms %.3g and %.3g), alpha is undefined",
				rv[0], it, st.rhatNorm, vnorm)
			return 0, false, nil
		case orthogonal(rv[0], st.rhatNorm, vnorm):
			w.newShadow(st)
		default:
			return st.rho / rv[0], true, nil
		}
	}
}

// newShadow restarts the recurrence from r with r as the shadow residual.
func (w *Workspace) newShadow(st *state) {
	ddmat.Copy(w.rhat, w.r)
	st.restart(st.rnorm)
}

// product sets y = A z, then sums the local dots returns over the ranks
// (one Allreduce).
func (w *Workspace) product(y, z *ddmat.Dense, dots func() []float64) ([]float64, error) {
	if err := w.A.ApplyBlock(y.V, z.V, 1); err != nil {
		return nil, err
	}
	local := dots()
	if err := y.BE.Err(); err != nil {
		return nil, err
	}
	return ddmat.Sum(y.Comm, local...)
}
