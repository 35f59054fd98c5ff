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
// its application into the update of x and r, so a step reads each vector
// once.
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
	// residual of the recurrence.
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
	w, err := NewWorkspace(A, b)
	if err != nil {
		return Result{}, err
	}
	defer w.Free()
	return w.Solve(M, b, x, opt)
}

// Workspace holds PCG's work vectors for solves with one operator, so that
// a simulation solving many systems allocates nothing per solve.
type Workspace struct {
	A          *dsmat.Operator
	r, z, p, q *ddmat.Dense
}

// NewWorkspace allocates the work vectors for A, shaped like b.
func NewWorkspace(A *dsmat.Operator, b *ddmat.Dense) (*Workspace, error) {
	s := &Workspace{A: A}
	for _, v := range []**ddmat.Dense{&s.r, &s.z, &s.p, &s.q} {
		d, err := ddmat.NewVector(b.Comm, b.BE, b.Rows)
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
	res, err := s.run(M, b, x, opt)
	if err != nil {
		return res, err
	}
	res.RelRes, err = s.trueResidual(b, x)
	return res, err
}

func (s *Workspace) run(M Preconditioner, b, x *ddmat.Dense, opt Options) (Result, error) {
	be, c := b.BE, b.Comm
	r, z, p, q := s.r, s.z, s.p, s.q
	var res Result

	bnorm, err := ddmat.Norm(b)
	if err != nil {
		return res, err
	}
	switch {
	case bnorm == 0:
		be.Fill(x.V, 0)
		res.Converged, res.Reason, res.History = true, Converged, []float64{0}
		return res, nil
	case !finite(bnorm):
		res.History = []float64{math.NaN()}
		return stopped(res, NaN, "||b|| = %v: the right-hand side overflows; scale the system", bnorm), nil
	}
	// r = b - A x
	if err := s.A.Apply(q.V, x.V); err != nil {
		return res, err
	}
	ddmat.Copy(r, b)
	ddmat.Axpby(r, -1, q, 1)
	if err := M.Apply(z, r); err != nil {
		return res, err
	}
	sums, err := ddmat.Sum(c, be.Dot(r.V, r.V), be.Dot(r.V, z.V), opt.stopFlag())
	if err != nil {
		return res, err
	}
	rr, rz, stop := sums[0], sums[1], sums[2]
	res.History = append(res.History, math.Sqrt(rr)/bnorm)
	ddmat.Copy(p, z)
	stag := stagnation{window: opt.Stagnation, best: res.History[0]}

	for it := 1; ; it++ {
		relres := res.History[len(res.History)-1]
		switch {
		case !finite(relres):
			return stopped(res, NaN, "the residual is %v at iteration %d", relres, it-1), nil
		case relres <= opt.Tol:
			res.Converged, res.Reason = true, Converged
			return res, nil
		case stop > 0:
			res.Reason = Interrupted
			return res, nil
		case it > opt.MaxIt:
			res.Reason = MaxIterations
			return res, nil
		case stag.stuck(it-1, relres):
			return stopped(res, Stagnation, "the relative residual has stayed above %.4g (0.1%% below its low at iteration %d) for %d iterations",
				StagnationFactor*stag.best, stag.bestIt, it-1-stag.bestIt), nil
		case !finite(rz):
			return stopped(res, NaN, "r'z = %v at iteration %d: the preconditioner produced NaN or Inf", rz, it-1), nil
		case !(rz > 0):
			return stopped(res, Breakdown, "r'z = %.3g at iteration %d: the preconditioner is not positive definite", rz, it-1), nil
		}

		if err := s.A.Apply(q.V, p.V); err != nil {
			return res, err
		}
		pq, err := ddmat.Dot(p, q)
		if err != nil {
			return res, err
		}
		if !finite(pq) {
			return stopped(res, NaN, "p'Ap = %v at iteration %d: overflow or NaN in the matrix product", pq, it), nil
		}
		if !(pq > 0) {
			return stopped(res, Breakdown, "p'Ap = %.3g at iteration %d: the matrix is not positive definite", pq, it), nil
		}
		alpha := rz / pq
		var rrLocal, rzLocal float64
		if d, ok := M.(Diagonal); ok {
			rrLocal, rzLocal = be.UpdateXRZ(x.V, r.V, alpha, p.V, q.V, d.Scaling(), z.V)
		} else {
			rrLocal = be.UpdateXR(x.V, r.V, alpha, p.V, q.V)
			if err := M.Apply(z, r); err != nil {
				return res, err
			}
			rzLocal = be.Dot(r.V, z.V)
		}
		sums, err := ddmat.Sum(c, rrLocal, rzLocal, opt.stopFlag())
		if err == nil {
			err = be.Err()
		}
		if err != nil {
			return res, err
		}
		rr, rzNew := sums[0], sums[1]
		stop = sums[2]
		res.Iterations = it
		res.History = append(res.History, math.Sqrt(rr)/bnorm)
		if opt.Progress != nil {
			opt.Progress(it, math.Sqrt(rr)/bnorm)
		}
		ddmat.Axpby(p, 1, z, rzNew/rz) // p = z + beta p
		rz = rzNew
	}
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

// trueResidual returns ||b - A x||/||b|| computed from x.
func (s *Workspace) trueResidual(b, x *ddmat.Dense) (float64, error) {
	if err := s.A.Apply(s.q.V, x.V); err != nil {
		return 0, err
	}
	ddmat.Copy(s.r, b)
	ddmat.Axpby(s.r, -1, s.q, 1)
	rnorm, err := ddmat.Norm(s.r)
	if err != nil {
		return 0, err
	}
	bnorm, err := ddmat.Norm(b)
	if err != nil || bnorm == 0 {
		return 0, err
	}
	return rnorm / bnorm, nil
}
