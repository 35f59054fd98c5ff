// Package pcg solves distributed SPD systems A x = b by the preconditioned
// conjugate gradient method. It is written once against the backend
// interface: the same code runs on CPUs and GPUs.
package pcg

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
)

// Preconditioner applies z = M^{-1} r for an approximate inverse M^{-1} of A
// that is symmetric positive definite. It is set up once (by its
// constructor) and applied many times.
type Preconditioner interface {
	Name() string
	Apply(z, r *ddmat.Dense) error
	Free()
}

// Diagonal is a preconditioner that scales by a vector (Jacobi). PCG fuses
// its application into the update of r and into the next direction's, and
// stores z = M r only once, at the start.
type Diagonal interface {
	Preconditioner
	Scaling() backend.Vector
}

// Reason says why a solve stopped. The values are part of fsai-dist's
// report: new ones may be added, existing ones never change.
type Reason string

const (
	Converged     Reason = "converged"
	MaxIterations Reason = "max_iterations"
	// Breakdown: p'Ap <= 0 or r'z <= 0; the matrix or the preconditioner is
	// not positive definite.
	Breakdown Reason = "breakdown"
	// NaN: a NaN or infinite value appeared in the iteration (||b||, the
	// residual, r'z or p'Ap): overflow, or NaN from the preconditioner.
	NaN Reason = "nan"
	// Stagnation: the residual has not reached a new low for as many
	// iterations as it took to reach its last one, and for at least
	// Options.Stagnation (see StagnationFactor); off by default
	// (DefaultStagnation).
	Stagnation Reason = "stagnation"
	// Interrupted: Options.Stop asked the solve to stop.
	Interrupted Reason = "interrupted"
)

// StagnationFactor defines a new low of the residual for the stagnation
// test: a relative residual at most this factor times the lowest one before.
//
// The residual norm of CG is not monotone: on hard problems it plateaus for
// hundreds or thousands of iterations and then falls again (plain CG on
// diffusion:20 does so for 1320 iterations, 24000 iterations into the
// solve). A plateau that has lasted as long as the whole solve before it,
// though, is stagnation: the second half of the iterations gained nothing.
// That is the test, with Options.Stagnation as the shortest window, which
// matters early in a solve.
const StagnationFactor = 0.999

// Options control a solve.
type Options struct {
	// Tol: converged when the true ||b - A x||/||b|| <= Tol (Monitor).
	Tol   float64
	MaxIt int
	// Stagnation, when positive, stops the solve with reason Stagnation
	// once max(Stagnation, k) iterations have passed without a new low of
	// the recurrence's relative residual (at most StagnationFactor times the
	// lowest earlier value), k being the iteration of the last new low: the
	// latter half of the iterations made no progress. A residual
	// replacement restarts the test. DefaultStagnation (0) is off.
	Stagnation int
	// Stop, when set, is called on every rank once per iteration; when it
	// returns true on any rank, all ranks stop after the same iteration with
	// reason Interrupted, x holding that iteration's iterate. The answers
	// travel in the iteration's one Allreduce, so the check sends no
	// message of its own. It should be cheap, like reading a flag that a
	// signal handler sets.
	Stop func() bool
	// Progress, when set, is called after each iteration with the relative
	// residual of the recurrence (with several right-hand sides, the largest
	// of the columns still running).
	Progress func(iter int, relres float64)
}

// stopFlag is this rank's vote to stop: 1 to stop, 0 to go on.
func (o *Options) stopFlag() float64 {
	if o.Stop != nil && o.Stop() {
		return 1
	}
	return 0
}

// Result reports how a solve ended.
type Result struct {
	Converged  bool
	Reason     Reason
	Detail     string // why the solve stopped, for every reason but Converged
	Iterations int
	// RelRes is the true relative residual ||b - A x||/||b||, recomputed
	// from x at the end, not the recurrence's estimate. Converged implies
	// RelRes <= Options.Tol.
	RelRes float64
	// RecurrenceRelRes is the estimate the iteration ended with: the
	// recurrence's relative residual, or the true one where a residual
	// replacement put it in its place.
	RecurrenceRelRes float64
	// Replacements counts the residual replacements: the times the
	// recurrence met the tolerance and the true residual did not.
	Replacements int
	// History is the recurrence's ||r||/||b||, from iteration 0 (the true
	// residual of the initial guess); after a replacement the recurrence
	// goes on from the true residual.
	History []float64
}

// Solve runs PCG on A x = b from the initial guess in x and leaves the
// iterate in x. An error means the machinery failed (communication, device);
// a solve that does not converge is reported in Result. It allocates its
// work vectors for the one solve; a Workspace keeps them for many.
func Solve(A *dsmat.Operator, M Preconditioner, b, x *ddmat.Dense, opt Options) (Result, error) {
	res, err := SolveBlock(A, M, b, x, opt)
	if err != nil {
		return Result{}, err
	}
	return res[0], nil
}

// SolveBlock runs PCG on the columns of b at once (several right-hand sides,
// b and x of the same number of columns): one block product with A and one
// Allreduce per iteration serve every column. Each column runs its own CG
// recurrence and stops on its own; the others go on. It returns one Result
// per column.
func SolveBlock(A *dsmat.Operator, M Preconditioner, b, x *ddmat.Dense, opt Options) ([]Result, error) {
	w, err := NewWorkspace(A, b)
	if err != nil {
		return nil, err
	}
	defer w.Free()
	return w.SolveBlock(M, b, x, opt)
}

// Workspace holds PCG's work vectors for solves with one operator and one
// number of right-hand sides, so that a simulation solving many systems
// allocates nothing per solve.
type Workspace struct {
	A          *dsmat.Operator
	r, z, p, q *ddmat.Dense
}

// NewWorkspace allocates the work vectors for A, shaped like b.
func NewWorkspace(A *dsmat.Operator, b *ddmat.Dense) (*Workspace, error) {
	s := &Workspace{A: A}
	for _, v := range []**ddmat.Dense{&s.r, &s.z, &s.p, &s.q} {
		d, err := ddmat.New(b.Comm, b.BE, b.Rows, b.Cols)
		if err != nil {
			s.Free()
			return nil, fmt.Errorf("pcg: %w", err)
		}
		*v = d
	}
	return s, nil
}

// Free releases the work vectors.
func (s *Workspace) Free() {
	for _, v := range []*ddmat.Dense{s.r, s.z, s.p, s.q} {
		if v != nil {
			v.Free()
		}
	}
}

// Solve is pcg.Solve with the workspace's vectors.
func (s *Workspace) Solve(M Preconditioner, b, x *ddmat.Dense, opt Options) (Result, error) {
	res, err := s.SolveBlock(M, b, x, opt)
	if err != nil {
		return Result{}, err
	}
	return res[0], nil
}

// SolveBlock is pcg.SolveBlock with the workspace's vectors.
//
// A right-hand side whose norm lies outside [2^-64, 2^64] is solved scaled
// by the power of two that brings its norm into [1/2, 1) (x with it, and
// back at the end; exact unless entries leave the normal range), so that
// the recurrence's dot products neither underflow (b of entries 1e-200)
// nor overflow (1e200).
func (s *Workspace) SolveBlock(M Preconditioner, b, x *ddmat.Dense, opt Options) ([]Result, error) {
	if b.Cols != s.r.Cols || x.Cols != b.Cols {
		return nil, fmt.Errorf("pcg: %d right-hand sides and %d initial guesses for a workspace of %d", b.Cols, x.Cols, s.r.Cols)
	}
	bnorm, err := ddmat.Norms(b)
	if err != nil {
		return nil, err
	}
	scale := scales(bnorm)
	scaleColumns(x, scale, false)
	res, err := s.run(M, b, x, bnorm, scale, opt)
	if err != nil {
		return res, err
	}
	relres, err := s.trueResiduals(b, x, bnorm, scale)
	for c := range res {
		if err == nil {
			res[c].RelRes = relres[c]
		}
	}
	scaleColumns(x, scale, true)
	return res, err
}

// scales returns the power of two each column of b is solved scaled by: 1
// where its norm lies in [2^-64, 2^64] (or is 0, NaN or infinite), else the
// one that brings it into [1/2, 1) (into [2^-52, 1) for a subnormal
// norm).
func scales(bnorm []float64) []float64 {
	s := make([]float64, len(bnorm))
	for c, v := range bnorm {
		s[c] = 1
		if _, e := math.Frexp(v); finite(v) && v > 0 && (e < -63 || e > 65) {
			s[c] = math.Ldexp(1, min(-e, 1022)) // 2^1023 is the largest power of two
		}
	}
	return s
}

// scaleColumns multiplies the columns of x by scale (by 1/scale when
// inverse); it does nothing when every scale is 1.
func scaleColumns(x *ddmat.Dense, scale []float64, inverse bool) {
	a, ones := make([]float64, len(scale)), true
	for c, v := range scale {
		a[c] = v
		if inverse {
			a[c] = 1 / v
		}
		ones = ones && v == 1
	}
	if !ones {
		ddmat.AxpbyCols(x, a, x, make([]float64, len(a)))
	}
}

// column is the state of one right-hand side's CG recurrence.
type column struct {
	Monitor
	bnorm, rz float64 // bnorm: ||b|| times the column's scale
}

// check decides, before iteration it, whether the column stops: the stop
// rule (Monitor.Check), then r'z of the previous iteration.
func (c *column) check(it int, stop float64) {
	if !c.Check(it, stop > 0) {
		return
	}
	switch {
	case !finite(c.rz):
		c.Stop(NaN, "r'z = %v at iteration %d: the preconditioner produced NaN or Inf", c.rz, it-1)
	case !(c.rz > 0):
		c.Stop(Breakdown, "r'z = %.3g at iteration %d: the preconditioner is not positive definite", c.rz, it-1)
	}
}

// failed reports whether the column stopped on a failure or stagnation,
// whose iterate later steps must not touch (fixedColumns).
func (c *column) failed() bool {
	return !c.Active() && !c.Converged && c.Reason != Interrupted && c.Reason != MaxIterations
}

// run is PCG on the columns of b, whose norms are bnorm, each solved scaled
// by scale (x already is).
func (s *Workspace) run(M Preconditioner, b, x *ddmat.Dense, bnorm, scale []float64, opt Options) ([]Result, error) {
	be, comm, k := b.BE, b.Comm, b.Cols
	r, z, p := s.r, s.z, s.p
	cols := make([]column, k)
	results := func() []Result {
		out := make([]Result, k)
		for c := range cols {
			out[c] = cols[c].Result
		}
		return out
	}

	// x keeps, in a column that stops early for a failure, the iterate it
	// stopped at (later steps with alpha = 0 would turn it into NaN when p
	// holds NaN); zero right-hand sides have zero solutions.
	fixed := newFixedColumns(x)
	for c := range cols {
		col := &cols[c]
		col.bnorm = bnorm[c] * scale[c]
		switch {
		case bnorm[c] == 0:
			fixed.zero(c)
			*col = column{Monitor: NewMonitor(opt, 0)}
			col.Converged, col.Reason = true, Converged
		case !finite(bnorm[c]):
			col.Monitor = NewMonitor(opt, math.NaN())
			col.Stop(NaN, "||b|| = %v: the right-hand side holds NaN or Inf", bnorm[c])
			fixed.keep(c)
		}
	}
	if !anyActive(cols) {
		return results(), fixed.apply()
	}

	rnorm, err := s.residual(M, b, x, scale)
	if err != nil {
		return nil, err
	}
	local := make([]float64, k+1)
	ddmat.LocalDots(r, z, local[:k])
	local[k] = opt.stopFlag()
	sums, err := ddmat.Sum(comm, local...)
	if err != nil {
		return nil, err
	}
	for c := range cols {
		if col := &cols[c]; col.bnorm != 0 && finite(col.bnorm) {
			col.Monitor = NewMonitor(opt, rnorm[c]/col.bnorm)
			col.rz = sums[c]
		}
	}
	stop := sums[k]
	ddmat.Copy(p, z)

	alpha, beta, ones := make([]float64, k), make([]float64, k), make([]float64, k)
	negAlpha := make([]float64, k) // -alpha, for r -= alpha q without a fused kernel
	pq, rr, rz := make([]float64, k), make([]float64, k), make([]float64, k)
	for c := range ones {
		ones[c] = 1
	}
	local = make([]float64, 2*k+1)
	for it := 1; ; it++ {
		if err := s.confirm(M, b, x, cols, scale, it); err != nil {
			return nil, err
		}
		for c := range cols {
			if col := &cols[c]; col.Active() {
				col.check(it, stop)
				if col.failed() {
					fixed.keep(c)
				}
			}
		}
		if !anyActive(cols) {
			return results(), fixed.apply()
		}

		if err := s.A.ApplyDots(s.q.V, p.V, pq); err != nil {
			return nil, err
		}
		if pq, err = ddmat.Sum(comm, pq...); err != nil {
			return nil, err
		}
		for c := range cols {
			col := &cols[c]
			alpha[c] = 0
			switch {
			case !col.Active():
			case !finite(pq[c]):
				col.Stop(NaN, "p'Ap = %v at iteration %d: overflow or NaN in the matrix product", pq[c], it)
				fixed.keep(c)
			case !(pq[c] > 0):
				col.Stop(Breakdown, "p'Ap = %.3g at iteration %d: the matrix is not positive definite", pq[c], it)
				fixed.keep(c)
			default:
				alpha[c] = col.rz / pq[c]
			}
		}
		if !anyActive(cols) {
			return results(), fixed.apply()
		}
		for c, a := range alpha {
			negAlpha[c] = -a
		}
		if err := s.updateResidual(M, alpha, negAlpha, ones, rr, rz); err != nil {
			return nil, err
		}
		copy(local, rr)
		copy(local[k:], rz)
		local[2*k] = opt.stopFlag()
		sums, err := ddmat.Sum(comm, local...)
		if err == nil {
			err = be.Err()
		}
		if err != nil {
			return nil, err
		}
		stop = sums[2*k]
		worst := 0.0
		for c := range cols {
			col := &cols[c]
			beta[c] = 0
			if !col.Active() {
				continue
			}
			col.Record(it, math.Sqrt(sums[c])/col.bnorm)
			worst = max(worst, col.History[it])
			beta[c] = sums[k+c] / col.rz
			col.rz = sums[k+c]
		}
		if opt.Progress != nil {
			opt.Progress(it, worst)
		}
		s.step(M, x, alpha, beta)
	}
}

// residual sets r = scale*b - A x column by column and z = M r, and returns
// the norms of r's columns (Norms: robust to their scale).
func (s *Workspace) residual(M Preconditioner, b, x *ddmat.Dense, scale []float64) ([]float64, error) {
	if err := s.trueResidual(s.r, b, x, scale); err != nil {
		return nil, err
	}
	if err := M.Apply(s.z, s.r); err != nil {
		return nil, err
	}
	return ddmat.Norms(s.r)
}

// trueResidual sets dst = scale*b - A x column by column, with q as scratch.
func (s *Workspace) trueResidual(dst, b, x *ddmat.Dense, scale []float64) error {
	if err := s.A.ApplyBlock(s.q.V, x.V, x.Cols); err != nil {
		return err
	}
	ddmat.Copy(dst, b)
	negOnes := make([]float64, len(scale))
	for c := range negOnes {
		negOnes[c] = -1
	}
	ddmat.AxpbyCols(dst, negOnes, s.q, scale)
	return nil
}

// confirm applies the stop rule's check of the true residual before
// iteration it: where a column's recurrence has met the tolerance, it
// computes the true residual of the block into z (z and q are free between
// iterations) and hands it to the column's Monitor. A column whose true
// residual is above the tolerance restarts CG from it: r = b - A x, z = M
// r, r'z, p = z (residual replacement). Every rank sees the same reduced
// residuals and so takes the same path.
func (s *Workspace) confirm(M Preconditioner, b, x *ddmat.Dense, cols []column, scale []float64, it int) error {
	if !anyNeedsTrue(cols) {
		return nil
	}
	if err := s.trueResidual(s.z, b, x, scale); err != nil {
		return err
	}
	norms, err := ddmat.Norms(s.z)
	if err != nil {
		return err
	}
	k := len(cols)
	replace, keep := make([]float64, k), make([]float64, k)
	replaced := false
	for c := range cols {
		keep[c] = 1
		if col := &cols[c]; col.NeedsTrue() && col.Confirm(it, norms[c]/col.bnorm) {
			replace[c], keep[c], replaced = 1, 0, true
		}
	}
	if !replaced {
		return nil
	}
	ddmat.AxpbyCols(s.r, replace, s.z, keep)
	if err := M.Apply(s.z, s.r); err != nil {
		return err
	}
	rz := make([]float64, k)
	ddmat.LocalDots(s.r, s.z, rz)
	if err := s.r.BE.Err(); err != nil {
		return err
	}
	if rz, err = ddmat.Sum(s.r.Comm, rz...); err != nil {
		return err
	}
	for c := range cols {
		if replace[c] == 1 {
			cols[c].rz = rz[c]
		}
	}
	ddmat.AxpbyCols(s.p, replace, s.z, keep)
	return nil
}

// updateResidual is r -= alpha q and z = M r, leaving the local r'r and
// r'z of every column in rr and rz (negAlpha is -alpha, ones all ones). A
// diagonal preconditioner is fused into the update, and z is not stored
// (step forms it); with another, r'r and r'z are reduced together after
// it, so that the update waits for the device once.
func (s *Workspace) updateResidual(M Preconditioner, alpha, negAlpha, ones, rr, rz []float64) error {
	be, r, z, q := s.r.BE, s.r, s.z, s.q
	if d, ok := M.(Diagonal); ok {
		be.UpdateRZCols(r.V, alpha, q.V, d.Scaling(), rr, rz)
		return nil
	}
	ddmat.AxpbyCols(r, negAlpha, q, ones)
	if err := M.Apply(z, r); err != nil {
		return err
	}
	be.DotPairCols(r.V, r.V, z.V, rr, rz)
	return nil
}

// step moves x and p on in one pass: x += alpha p with the direction of
// this iteration, then p = z + beta p, z = M r (formed from r for a
// diagonal preconditioner).
func (s *Workspace) step(M Preconditioner, x *ddmat.Dense, alpha, beta []float64) {
	if d, ok := M.(Diagonal); ok {
		x.BE.UpdateXPCols(x.V, alpha, s.p.V, d.Scaling(), s.r.V, beta)
		return
	}
	x.BE.UpdateXPCols(x.V, alpha, s.p.V, nil, s.z.V, beta)
}

func anyActive(cols []column) bool {
	for _, c := range cols {
		if c.Active() {
			return true
		}
	}
	return false
}

func anyNeedsTrue(cols []column) bool {
	for _, c := range cols {
		if c.NeedsTrue() {
			return true
		}
	}
	return false
}

// trueResiduals returns ||b - A x||/||b|| of every column, computed from x
// in the scaled system the solve ran (scale*b - A x over scale*||b||: the
// residual the stop rule judged), with bnorm the norms of b's columns (0
// for a zero right-hand side).
func (s *Workspace) trueResiduals(b, x *ddmat.Dense, bnorm, scale []float64) ([]float64, error) {
	if err := s.trueResidual(s.r, b, x, scale); err != nil {
		return nil, err
	}
	rnorm, err := ddmat.Norms(s.r)
	if err != nil {
		return nil, err
	}
	for c := range rnorm {
		if bnorm[c] == 0 {
			rnorm[c] = 0
		} else {
			rnorm[c] /= bnorm[c] * scale[c]
		}
	}
	return rnorm, nil
}
