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

// Reason says why a solve stopped.
type Reason string

const (
	Converged     Reason = "converged"
	MaxIterations Reason = "max_iterations"
	// Breakdown: p'Ap <= 0, r'z <= 0 or a NaN/Inf appeared; the matrix or
	// the preconditioner is not SPD, or the problem is badly scaled.
	Breakdown Reason = "breakdown"
)

// Options control a solve.
type Options struct {
	Tol   float64 // stop when ||r||/||b|| <= Tol
	MaxIt int
	// Progress, when set, is called after each iteration with the relative
	// residual of the recurrence.
	Progress func(iter int, relres float64)
}

// Result reports how a solve ended.
type Result struct {
	Converged  bool
	Reason     Reason
	Detail     string // what broke down, for Breakdown
	Iterations int
	// RelRes is the true relative residual ||b - A x||/||b||, recomputed
	// from x at the end, not the recurrence's estimate.
	RelRes  float64
	History []float64 // the recurrence's ||r||/||b||, from iteration 0
}

// Solve runs PCG on A x = b from the initial guess in x and leaves the
// iterate in x. An error means the machinery failed (communication, device);
// a solve that does not converge is reported in Result.
func Solve(A *dsmat.Operator, M Preconditioner, b, x *ddmat.Dense, opt Options) (Result, error) {
	s, err := newSolver(A, b)
	if err != nil {
		return Result{}, err
	}
	defer s.free()
	res, err := s.run(M, b, x, opt)
	if err != nil {
		return res, err
	}
	res.RelRes, err = s.trueResidual(b, x)
	return res, err
}

// solver holds the work vectors of one solve.
type solver struct {
	A          *dsmat.Operator
	r, z, p, q *ddmat.Dense
}

func newSolver(A *dsmat.Operator, b *ddmat.Dense) (*solver, error) {
	s := &solver{A: A}
	for _, v := range []**ddmat.Dense{&s.r, &s.z, &s.p, &s.q} {
		d, err := ddmat.NewVector(b.Comm, b.BE, b.Rows)
		if err != nil {
			s.free()
			return nil, fmt.Errorf("pcg: %w", err)
		}
		*v = d
	}
	return s, nil
}

func (s *solver) free() {
	for _, v := range []*ddmat.Dense{s.r, s.z, s.p, s.q} {
		if v != nil {
			v.Free()
		}
	}
}

func (s *solver) run(M Preconditioner, b, x *ddmat.Dense, opt Options) (Result, error) {
	be, c := b.BE, b.Comm
	r, z, p, q := s.r, s.z, s.p, s.q
	var res Result

	bnorm, err := ddmat.Norm(b)
	if err != nil {
		return res, err
	}
	if bnorm == 0 {
		be.Fill(x.V, 0)
		res.Converged, res.Reason, res.History = true, Converged, []float64{0}
		return res, nil
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
	sums, err := ddmat.Sum(c, be.Dot(r.V, r.V), be.Dot(r.V, z.V))
	if err != nil {
		return res, err
	}
	rr, rz := sums[0], sums[1]
	res.History = append(res.History, math.Sqrt(rr)/bnorm)
	ddmat.Copy(p, z)

	for it := 1; ; it++ {
		relres := res.History[len(res.History)-1]
		switch {
		case math.IsNaN(relres) || math.IsInf(relres, 0):
			return breakdown(res, "the residual became %v", relres), nil
		case relres <= opt.Tol:
			res.Converged, res.Reason = true, Converged
			return res, nil
		case it > opt.MaxIt:
			res.Reason = MaxIterations
			return res, nil
		case !(rz > 0):
			return breakdown(res, "r'z = %.3g: the preconditioner is not positive definite", rz), nil
		}

		if err := s.A.Apply(q.V, p.V); err != nil {
			return res, err
		}
		pq, err := ddmat.Dot(p, q)
		if err != nil {
			return res, err
		}
		if !(pq > 0) || math.IsInf(pq, 0) {
			return breakdown(res, "p'Ap = %.3g at iteration %d: the matrix is not positive definite", pq, it), nil
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
		sums, err := ddmat.Sum(c, rrLocal, rzLocal)
		if err == nil {
			err = be.Err()
		}
		if err != nil {
			return res, err
		}
		rr, rzNew := sums[0], sums[1]
		res.Iterations = it
		res.History = append(res.History, math.Sqrt(rr)/bnorm)
		if opt.Progress != nil {
			opt.Progress(it, math.Sqrt(rr)/bnorm)
		}
		ddmat.Axpby(p, 1, z, rzNew/rz) // p = z + beta p
		rz = rzNew
	}
}

func breakdown(res Result, format string, args ...any) Result {
	res.Reason = Breakdown
	res.Detail = fmt.Sprintf(format, args...)
	return res
}

// trueResidual returns ||b - A x||/||b|| computed from x.
func (s *solver) trueResidual(b, x *ddmat.Dense) (float64, error) {
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
