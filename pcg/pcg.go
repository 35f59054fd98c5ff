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
	// Options.Stagnation (see StagnationFactor).
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
	Tol   float64 // stop when ||r||/||b|| <= Tol
	MaxIt int
	// Stagnation, when positive, stops the solve with reason Stagnation
	// once max(Stagnation, k) iterations have passed without a new low of
	// the recurrence's relative residual (at most StagnationFactor times the
	// lowest earlier value), k being the iteration of the last new low: the
	// latter half of the iterations made no progress.
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
	Detail     string // what went wrong, for Breakdown, NaN and Stagnation
	Iterations int
	// RelRes is the true relative residual ||b - A x||/||b||, recomputed
	// from x at the end, not the recurrence's estimate.
	RelRes  float64
	History []float64 // the recurrence's ||r||/||b||, from iteration 0
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
func (s *Workspace) SolveBlock(M Preconditioner, b, x *ddmat.Dense, opt Options) ([]Result, error) {
	if b.Cols != s.r.Cols || x.Cols != b.Cols {
		return nil, fmt.Errorf("pcg: %d right-hand sides and %d initial guesses for a workspace of %d", b.Cols, x.Cols, s.r.Cols)
	}
	bnorm, err := ddmat.Norms(b)
	if err != nil {
		return nil, err
	}
	res, err := s.run(M, b, x, bnorm, opt)
	if err != nil {
		return res, err
	}
	relres, err := s.trueResiduals(b, x, bnorm)
	for c := range res {
		if err == nil {
			res[c].RelRes = relres[c]
		}
	}
	return res, err
}

// column is the state of one right-hand side's CG recurrence.
type column struct {
	Result
	bnorm, rz float64
	active    bool
	stag      stagnation
}

// check decides, before iteration it, whether the column stops, from the
// relative residual and r'z of the previous iteration.
func (c *column) check(it int, stop float64, opt Options) {
	relres := c.History[len(c.History)-1]
	switch {
	case !finite(relres):
		c.stop(NaN, "the residual is %v at iteration %d", relres, it-1)
	case relres <= opt.Tol:
		c.Converged, c.Reason, c.active = true, Converged, false
	case stop > 0:
		c.Reason, c.active = Interrupted, false
	case it > opt.MaxIt:
		c.Reason, c.active = MaxIterations, false
	case c.stag.stuck(it-1, relres):
		c.stop(Stagnation, "the relative residual has stayed above %.4g (0.1%% below its low at iteration %d) for %d iterations",
			StagnationFactor*c.stag.best, c.stag.bestIt, it-1-c.stag.bestIt)
	case !finite(c.rz):
		c.stop(NaN, "r'z = %v at iteration %d: the preconditioner produced NaN or Inf", c.rz, it-1)
	case !(c.rz > 0):
		c.stop(Breakdown, "r'z = %.3g at iteration %d: the preconditioner is not positive definite", c.rz, it-1)
	}
}

// stop ends the column's solve for reason, with a detail that says how.
func (c *column) stop(reason Reason, format string, args ...any) {
	c.Result = stopped(c.Result, reason, format, args...)
	c.active = false
}

// record appends the relative residual of iteration it.
func (c *column) record(it int, rr float64) {
	c.Iterations = it
	c.History = append(c.History, math.Sqrt(rr)/c.bnorm)
}

// run is PCG on the columns of b, whose norms are bnorm.
func (s *Workspace) run(M Preconditioner, b, x *ddmat.Dense, bnorm []float64, opt Options) ([]Result, error) {
	be, comm, k := b.BE, b.Comm, b.Cols
	r, z, p, q := s.r, s.z, s.p, s.q
	cols := make([]column, k)
	results := func() []Result {
		out := make([]Result, k)
		for c := range cols {
			out[c] = cols[c].Result
		}
		return out
	}

	for c := range cols {
		cols[c].bnorm, cols[c].active = bnorm[c], true
	}
	// x keeps, in a column that stops early for a failure, the iterate it
	// stopped at (later steps with alpha = 0 would turn it into NaN when p
	// holds NaN); zero right-hand sides have zero solutions.
	fixed := newFixedColumns(x)
	for c := range cols {
		col := &cols[c]
		switch {
		case bnorm[c] == 0:
			fixed.zero(c)
			col.Converged, col.Reason, col.History, col.active = true, Converged, []float64{0}, false
		case !finite(bnorm[c]):
			col.History = []float64{math.NaN()}
			col.stop(NaN, "||b|| = %v: the right-hand side overflows; scale the system", bnorm[c])
			fixed.keep(c)
		}
	}
	if !anyActive(cols) {
		return results(), fixed.apply()
	}

	// r = b - A x
	if err := s.A.ApplyBlock(q.V, x.V, k); err != nil {
		return nil, err
	}
	ddmat.Copy(r, b)
	ddmat.Axpby(r, -1, q, 1)
	if err := M.Apply(z, r); err != nil {
		return nil, err
	}
	local := make([]float64, 2*k+1)
	ddmat.LocalDots(r, r, local[:k])
	ddmat.LocalDots(r, z, local[k:2*k])
	local[2*k] = opt.stopFlag()
	sums, err := ddmat.Sum(comm, local...)
	if err != nil {
		return nil, err
	}
	for c := range cols {
		if col := &cols[c]; col.active {
			col.rz = sums[k+c]
			col.History = append(col.History, math.Sqrt(sums[c])/col.bnorm)
			col.stag = stagnation{window: opt.Stagnation, best: col.History[0]}
		}
	}
	stop := sums[2*k]
	ddmat.Copy(p, z)

	alpha, beta, ones := make([]float64, k), make([]float64, k), make([]float64, k)
	negAlpha := make([]float64, k) // -alpha, for r -= alpha q without a fused kernel
	pq, rr, rz := make([]float64, k), make([]float64, k), make([]float64, k)
	for c := range ones {
		ones[c] = 1
	}
	for it := 1; ; it++ {
		for c := range cols {
			if col := &cols[c]; col.active {
				col.check(it, stop, opt)
				if !col.active && !col.Converged && col.Reason != Interrupted && col.Reason != MaxIterations {
					fixed.keep(c)
				}
			}
		}
		if !anyActive(cols) {
			return results(), fixed.apply()
		}

		if err := s.A.ApplyDots(q.V, p.V, pq); err != nil {
			return nil, err
		}
		if pq, err = ddmat.Sum(comm, pq...); err != nil {
			return nil, err
		}
		for c := range cols {
			col := &cols[c]
			alpha[c] = 0
			switch {
			case !col.active:
			case !finite(pq[c]):
				col.stop(NaN, "p'Ap = %v at iteration %d: overflow or NaN in the matrix product", pq[c], it)
				fixed.keep(c)
			case !(pq[c] > 0):
				col.stop(Breakdown, "p'Ap = %.3g at iteration %d: the matrix is not positive definite", pq[c], it)
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
			if !col.active {
				continue
			}
			col.record(it, sums[c])
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
		if c.active {
			return true
		}
	}
	return false
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// stopped ends a solve that failed for reason, with a detail that says how.
func stopped(res Result, reason Reason, format string, args ...any) Result {
	res.Reason = reason
	res.Detail = fmt.Sprintf(format, args...)
	return res
}

// stagnation tracks the lowest relative residual for the stagnation test.
type stagnation struct {
	window int     // 0: no test
	best   float64 // the lowest relative residual so far, as of bestIt
	bestIt int
}

// stuck records the relative residual of iteration it and reports whether
// max(window, bestIt) iterations have passed since the last new low.
func (s *stagnation) stuck(it int, relres float64) bool {
	if relres <= StagnationFactor*s.best {
		s.best, s.bestIt = relres, it
	}
	return s.window > 0 && it-s.bestIt >= max(s.window, s.bestIt)
}

// trueResiduals returns ||b - A x||/||b|| of every column, computed from x,
// with bnorm the norms of b's columns (0 for a zero right-hand side).
func (s *Workspace) trueResiduals(b, x *ddmat.Dense, bnorm []float64) ([]float64, error) {
	if err := s.A.ApplyBlock(s.q.V, x.V, x.Cols); err != nil {
		return nil, err
	}
	ddmat.Copy(s.r, b)
	ddmat.Axpby(s.r, -1, s.q, 1)
	rnorm, err := ddmat.Norms(s.r)
	if err != nil {
		return nil, err
	}
	for c := range rnorm {
		if bnorm[c] == 0 {
			rnorm[c] = 0
		} else {
			rnorm[c] /= bnorm[c]
		}
	}
	return rnorm, nil
}
