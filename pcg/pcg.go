// Package pcg solves distributed SPD systems A x = b by the preconditioned
// conjugate gradient method, one Krylov method over package krylov's
// contract (operator, preconditioner, options, result, stop rule). It is
// written once against the backend interface: the same code runs on CPUs
// and GPUs, with fused vector updates where the backend offers them
// (Fused). A workspace of NewSingleReductionWorkspace runs single-reduction
// CG instead (Chronopoulos and Gear): one Allreduce per iteration instead
// of two, for one more vector (single.go).
package pcg

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/precond"
)

// The contract PCG shares with every Krylov method lives in package krylov;
// these aliases keep its names under pcg for the programs that use them
// (the same types, not copies).
type (
	Preconditioner = krylov.Preconditioner
	Diagonal       = krylov.Diagonal
	Reason         = krylov.Reason
	Options        = krylov.Options
	Result         = krylov.Result
	Monitor        = krylov.Monitor
	// None and Jacobi are package precond's.
	None   = precond.None
	Jacobi = precond.Jacobi
)

// The stop reasons and constants of package krylov, under pcg.
const (
	Converged         = krylov.Converged
	MaxIterations     = krylov.MaxIterations
	Breakdown         = krylov.Breakdown
	NaN               = krylov.NaN
	Stagnation        = krylov.Stagnation
	Interrupted       = krylov.Interrupted
	Diverged          = krylov.Diverged
	StagnationFactor  = krylov.StagnationFactor
	DefaultStagnation = krylov.DefaultStagnation
)

// NewMonitor is krylov.NewMonitor.
func NewMonitor(opt Options, relres0 float64) Monitor { return krylov.NewMonitor(opt, relres0) }

// NewJacobi is precond.NewJacobi.
func NewJacobi(A *dsmat.Matrix, be backend.Backend) (*Jacobi, error) { return precond.NewJacobi(A, be) }

// Fused is the optional interface of a backend that runs PCG's vector
// updates as fused kernels: one pass over the vectors instead of two or
// three. The cpu and gpu backends implement it; PCG asks for it and, on a
// backend without it, runs the same updates from the backend's block
// operations (AxpbyCols, MulCols, DotPairCols), which give the same
// iterates up to rounding.
type Fused interface {
	// UpdateRZCols is PCG's residual update with a diagonal preconditioner
	// d (one for every column): r[:,c] -= a[c]*q[:,c], with rr[c] and
	// rz[c] set to the local r'r and r'z of column c after it, z[i,c] =
	// d[i]*r[i,c]. z itself is not stored: UpdateXPCols forms it where the
	// next direction needs it, so a Jacobi step reads r once less.
	UpdateRZCols(r backend.Vector, a []float64, q, d backend.Vector, rr, rz []float64)
	// UpdateXPCols is PCG's step to the next iterate and direction, in one
	// pass: x[:,c] += a[c]*p[:,c], then p[:,c] = z[:,c] + b[c]*p[:,c], where
	// z[i,c] = d[i]*r[i,c] for a diagonal preconditioner d and z = r when
	// d is nil (r then holds the preconditioned residual).
	UpdateXPCols(x backend.Vector, a []float64, p, d, r backend.Vector, b []float64)
}

// Solve runs PCG on A x = b from the initial guess in x and leaves the
// iterate in x. An error means the machinery failed (communication, device);
// a solve that does not converge is reported in Result. It allocates its
// work vectors for the one solve; a Workspace keeps them for many.
func Solve(A krylov.Operator, M Preconditioner, b, x *ddmat.Dense, opt Options) (Result, error) {
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
func SolveBlock(A krylov.Operator, M Preconditioner, b, x *ddmat.Dense, opt Options) ([]Result, error) {
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
	A          krylov.Operator
	r, z, p, q *ddmat.Dense
	t          *ddmat.Dense // the true residual of monitor; nil until then
	fused      Fused        // the backend's fused updates; nil: none
	single     *single      // single-reduction CG's state; nil: standard PCG
}

// NewWorkspace allocates the work vectors for A, shaped like b.
func NewWorkspace(A krylov.Operator, b *ddmat.Dense) (*Workspace, error) {
	s := &Workspace{A: A}
	s.fused, _ = b.BE.(Fused)
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
	for _, v := range []*ddmat.Dense{s.r, s.z, s.p, s.q, s.t} {
		if v != nil {
			v.Free()
		}
	}
	s.single.free()
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
	scale := krylov.Scales(bnorm)
	krylov.ScaleColumns(x, scale, false)
	run := s.run
	if s.single != nil {
		run = s.runSingle
	}
	res, err := run(M, b, x, bnorm, scale, opt)
	if err != nil {
		return res, err
	}
	relres, err := krylov.TrueRelRes(s.A, s.r, b, x, s.q, bnorm, scale)
	for c := range res {
		if err == nil {
			res[c].RelRes = relres[c]
		}
	}
	krylov.ScaleColumns(x, scale, true)
	return res, err
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
	case !krylov.Finite(c.rz):
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

// begin makes the columns' states for right-hand sides of norms bnorm,
// each solved scaled by scale: a zero right-hand side is converged at once
// (zero solution), one that holds NaN or Inf stopped; the others are
// started by start. x keeps, in a column that stops early for a failure,
// the iterate it stopped at (later steps with alpha = 0 would turn it into
// NaN when p holds NaN): fixed records them.
func begin(x *ddmat.Dense, bnorm, scale []float64, opt Options) ([]column, *fixedColumns) {
	cols := make([]column, len(bnorm))
	fixed := newFixedColumns(x)
	for c := range cols {
		col := &cols[c]
		col.bnorm = bnorm[c] * scale[c]
		switch {
		case bnorm[c] == 0:
			fixed.zero(c)
			*col = column{Monitor: NewMonitor(opt, 0)}
			col.Converged, col.Reason = true, Converged
		case !krylov.Finite(bnorm[c]):
			col.Monitor = NewMonitor(opt, math.NaN())
			col.Stop(NaN, "||b|| = %v: the right-hand side holds NaN or Inf", bnorm[c])
			fixed.keep(c)
		}
	}
	return cols, fixed
}

// start gives the columns that begin left running their monitors, from the
// initial residual norms, and their r'z.
func start(cols []column, rnorm, rz []float64, opt Options) {
	for c := range cols {
		if col := &cols[c]; col.bnorm != 0 && krylov.Finite(col.bnorm) {
			col.Monitor = NewMonitor(opt, rnorm[c]/col.bnorm)
			col.rz = rz[c]
		}
	}
}

// checkAll runs check on the running columns before iteration it, keeping
// the iterates of those that fail; it reports whether any still runs.
func checkAll(cols []column, fixed *fixedColumns, it int, stop float64) bool {
	for c := range cols {
		if col := &cols[c]; col.Active() {
			col.check(it, stop)
			if col.failed() {
				fixed.keep(c)
			}
		}
	}
	return anyActive(cols)
}

// steps sets alpha[c] = r'z / p'Ap of every running column from its p'Ap
// pq[c] in iteration it, 0 for the others; a p'Ap that is not finite and
// positive stops its column (NaN, breakdown), whose iterate fixed keeps. It
// reports whether any column still runs.
func steps(cols []column, fixed *fixedColumns, it int, pq, alpha []float64) bool {
	for c := range cols {
		col := &cols[c]
		alpha[c] = 0
		switch {
		case !col.Active():
		case !krylov.Finite(pq[c]):
			col.Stop(NaN, "p'Ap = %v at iteration %d: overflow or NaN in the matrix product", pq[c], it)
			fixed.keep(c)
		case !(pq[c] > 0):
			col.Stop(Breakdown, "p'Ap = %.3g at iteration %d: the matrix is not positive definite", pq[c], it)
			fixed.keep(c)
		default:
			alpha[c] = col.rz / pq[c]
		}
	}
	return anyActive(cols)
}

// record takes iteration it's reduced r'r and r'z of every column: the
// running columns record their relative residuals, beta[c] is the new r'z
// over the old (0 for the stopped columns), and r'z moves on. It calls
// opt.Progress with the worst relative residual and returns it.
func record(cols []column, it int, rr, rz, beta []float64, opt Options) float64 {
	worst := 0.0
	for c := range cols {
		col := &cols[c]
		beta[c] = 0
		if !col.Active() {
			continue
		}
		col.Record(it, math.Sqrt(rr[c])/col.bnorm)
		worst = max(worst, col.History[it])
		beta[c] = rz[c] / col.rz
		col.rz = rz[c]
	}
	if opt.Progress != nil {
		opt.Progress(it, worst)
	}
	return worst
}

// results are the columns' results.
func results(cols []column) []Result {
	out := make([]Result, len(cols))
	for c := range cols {
		out[c] = cols[c].Result
	}
	return out
}

// run is PCG on the columns of b, whose norms are bnorm, each solved scaled
// by scale (x already is).
func (s *Workspace) run(M Preconditioner, b, x *ddmat.Dense, bnorm, scale []float64, opt Options) ([]Result, error) {
	be, comm, k := b.BE, b.Comm, b.Cols
	r, z, p := s.r, s.z, s.p
	cols, fixed := begin(x, bnorm, scale, opt)
	if !anyActive(cols) {
		return results(cols), fixed.apply()
	}

	rnorm, err := s.residual(M, b, x, scale)
	if err != nil {
		return nil, err
	}
	local := make([]float64, k+1)
	ddmat.LocalDots(r, z, local[:k])
	local[k] = opt.StopVote()
	sums, err := ddmat.Sum(comm, local...)
	if err != nil {
		return nil, err
	}
	start(cols, rnorm, sums[:k], opt)
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
		if !checkAll(cols, fixed, it, stop) {
			return results(cols), fixed.apply()
		}

		if err := s.A.ApplyDots(s.q.V, p.V, pq); err != nil {
			return nil, err
		}
		if pq, err = ddmat.Sum(comm, pq...); err != nil {
			return nil, err
		}
		if !steps(cols, fixed, it, pq, alpha) {
			return results(cols), fixed.apply()
		}
		for c, a := range alpha {
			negAlpha[c] = -a
		}
		if err := s.updateResidual(M, alpha, negAlpha, ones, rr, rz); err != nil {
			return nil, err
		}
		copy(local, rr)
		copy(local[k:], rz)
		local[2*k] = opt.StopVote()
		sums, err := ddmat.Sum(comm, local...)
		if err == nil {
			err = be.Err()
		}
		if err != nil {
			return nil, err
		}
		stop = sums[2*k]
		worst := record(cols, it, sums[:k], sums[k:2*k], beta, opt)
		s.step(M, x, alpha, beta, ones)
		if err := s.monitor(b, x, cols, bnorm, scale, it, worst, opt); err != nil {
			return nil, err
		}
	}
}

// monitor passes the true relative residual of x, after iteration it's
// update, with the recurrence's, to opt.TrueProgress every opt.TrueEvery
// iterations (krylov.Options); the true residual goes to a vector of its
// own (spare), which is also the product's scratch.
func (s *Workspace) monitor(b, x *ddmat.Dense, cols []column, bnorm, scale []float64, it int, recurrence float64, opt Options) error {
	if opt.TrueProgress == nil || opt.TrueEvery <= 0 || it%opt.TrueEvery != 0 || !anyActive(cols) {
		return nil
	}
	t, err := s.spare()
	if err != nil {
		return err
	}
	relres, err := krylov.TrueRelRes(s.A, t, b, x, t, bnorm, scale)
	if err != nil {
		return err
	}
	worst := 0.0
	for c := range cols {
		if cols[c].Active() {
			worst = max(worst, relres[c])
		}
	}
	opt.TrueProgress(it, recurrence, worst)
	return nil
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

// spare returns the vector of the true residuals that monitor and
// single-reduction CG's confirm compute, made on first use.
func (s *Workspace) spare() (*ddmat.Dense, error) {
	if s.t == nil {
		t, err := ddmat.New(s.r.Comm, s.r.BE, s.r.Rows, s.r.Cols)
		if err != nil {
			return nil, fmt.Errorf("pcg: true residual: %w", err)
		}
		s.t = t
	}
	return s.t, nil
}

// trueResidual sets dst = scale*b - A x column by column, with dst as the
// product's scratch.
func (s *Workspace) trueResidual(dst, b, x *ddmat.Dense, scale []float64) error {
	return krylov.Residual(s.A, dst, b, x, dst, scale)
}

// confirm applies the stop rule's check of the true residual before
// iteration it: where a column's recurrence has met the tolerance, it
// computes the true residual of the block into z (z and q are free between
// iterations) and hands it to the column's Monitor. A column whose true
// residual is above the tolerance restarts CG from it: r = b - A x, z = M
// r, r'z, p = z (residual replacement). Every rank sees the same reduced
// residuals and so takes the same path.
func (s *Workspace) confirm(M Preconditioner, b, x *ddmat.Dense, cols []column, scale []float64, it int) error {
	replace, keep, err := s.replace(b, x, cols, scale, it, s.z)
	if replace == nil || err != nil {
		return err
	}
	if err := M.Apply(s.z, s.r); err != nil {
		return err
	}
	rz := make([]float64, len(cols))
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

// replace is the stop rule's check of the true residual before iteration
// it, shared by both variants: where a column's recurrence has met the
// tolerance, it computes the true residual of the block into dst and hands
// it to the column's Monitor; in the columns whose true residual is above
// the tolerance, it replaces r by it. It returns 1 for the replaced
// columns in replace and 1 for the others in keep (AxpbyCols's scalars),
// or nil when it replaced none.
func (s *Workspace) replace(b, x *ddmat.Dense, cols []column, scale []float64, it int, dst *ddmat.Dense) (replace, keep []float64, err error) {
	if !anyNeedsTrue(cols) {
		return nil, nil, nil
	}
	if err := s.trueResidual(dst, b, x, scale); err != nil {
		return nil, nil, err
	}
	norms, err := ddmat.Norms(dst)
	if err != nil {
		return nil, nil, err
	}
	k := len(cols)
	replace, keep = make([]float64, k), make([]float64, k)
	replaced := false
	for c := range cols {
		keep[c] = 1
		if col := &cols[c]; col.NeedsTrue() && col.Confirm(it, norms[c]/col.bnorm) {
			replace[c], keep[c], replaced = 1, 0, true
		}
	}
	if !replaced {
		return nil, nil, nil
	}
	ddmat.AxpbyCols(s.r, replace, dst, keep)
	return replace, keep, nil
}

// updateResidual is r -= alpha q and z = M r, leaving the local r'r and
// r'z of every column in rr and rz (negAlpha is -alpha, ones all ones). On
// a Fused backend a diagonal preconditioner is fused into the update, and z
// is not stored (step forms it); otherwise r'r and r'z are reduced
// together after M, so that the update waits for the device once.
func (s *Workspace) updateResidual(M Preconditioner, alpha, negAlpha, ones, rr, rz []float64) error {
	r, z, q := s.r, s.z, s.q
	if d, ok := M.(Diagonal); ok && s.fused != nil {
		s.fused.UpdateRZCols(r.V, alpha, q.V, d.Scaling(), rr, rz)
		return nil
	}
	ddmat.AxpbyCols(r, negAlpha, q, ones)
	if err := M.Apply(z, r); err != nil {
		return err
	}
	r.BE.DotPairCols(r.V, r.V, z.V, rr, rz)
	return nil
}

// step moves x and p on: x += alpha p with the direction of this
// iteration, then p = z + beta p, z = M r (formed from r for a diagonal
// preconditioner on a Fused backend). A Fused backend does both in one
// pass; otherwise they are two block updates (ones is all ones).
func (s *Workspace) step(M Preconditioner, x *ddmat.Dense, alpha, beta, ones []float64) {
	switch d, diagonal := M.(Diagonal); {
	case s.fused != nil && diagonal:
		s.fused.UpdateXPCols(x.V, alpha, s.p.V, d.Scaling(), s.r.V, beta)
	case s.fused != nil:
		s.fused.UpdateXPCols(x.V, alpha, s.p.V, nil, s.z.V, beta)
	default:
		ddmat.AxpbyCols(x, alpha, s.p, ones)
		ddmat.AxpbyCols(s.p, ones, s.z, beta)
	}
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
