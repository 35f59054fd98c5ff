// Package krylov is the contract that fsai-dist's Krylov methods share: the
// operator and preconditioner they are given, the options of a solve, the
// result and its stop reasons, and the stop rule (Monitor) that decides,
// for every method alike, when a solve has converged or must stop. A
// method is a package over this one (pcg, bicgstab, gmres); the
// composition root (package solver) hands it an Operator and a
// Preconditioner and reads back Results.
package krylov

import (
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
)

// Operator is the distributed matrix a method multiplies by (A): its
// products are collective over the vectors' communicator. dsmat.Operator
// implements it.
type Operator interface {
	// ApplyBlock sets Y = A X for row-major blocks of k columns.
	ApplyBlock(y, x backend.Vector, k int) error
	// ApplyDots is ApplyBlock for k = len(dots) columns that also sets
	// dots[c] to this rank's part of X[:,c]'Y[:,c] (CG's p'Ap), computed
	// as the product goes.
	ApplyDots(y, x backend.Vector, dots []float64) error
}

// Preconditioner applies z = M^{-1} r for an approximate inverse M^{-1} of
// A (symmetric positive definite for CG). It is set up once (by its
// constructor) and applied many times, to blocks of any number of columns.
type Preconditioner interface {
	Name() string
	Apply(z, r *ddmat.Dense) error
	Free()
}

// Diagonal is a preconditioner that scales by a vector (Jacobi). A method
// may fuse its application into its vector updates instead of calling
// Apply.
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
	// Breakdown: a quantity the method divides by vanished or has the
	// wrong sign (for CG, p'Ap <= 0 or r'z <= 0: the matrix or the
	// preconditioner is not positive definite).
	Breakdown Reason = "breakdown"
	// NaN: a NaN or infinite value appeared in the iteration (||b||, the
	// residual, a dot product): overflow, or NaN from the preconditioner.
	NaN Reason = "nan"
	// Stagnation: the residual has not reached a new low for as many
	// iterations as it took to reach its last one, and for at least
	// Options.Stagnation (see StagnationFactor); off by default
	// (DefaultStagnation).
	Stagnation Reason = "stagnation"
	// Interrupted: Options.Stop asked the solve to stop.
	Interrupted Reason = "interrupted"
	// Diverged: the relative residual grew above Options.DivTol times
	// the initial one (PETSc's KSP_DIVERGED_DTOL). BiCGSTAB can run away
	// like this on a hard nonsymmetric matrix, long before it overflows.
	Diverged Reason = "diverged"
)

// DefaultDivTol is the divergence tolerance of BiCGSTAB and GMRES in the
// CLI (-divtol) and the library: a residual 1e10 times the initial one.
// On convection-dominated problems BiCGSTAB's residual rises 1e5- to
// 1e6-fold before it converges (convdiff:40:1000 to convdiff:100:10000),
// which a tolerance of 1e5 (or PETSc's default, 1e4) would stop as
// divergence; a run that does diverge still stops long before it
// overflows (utm1700a with Jacobi: at iteration 686, against 3e37 by
// iteration 5000 without it).
const DefaultDivTol = 1e10

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
	// DivTol, when positive, stops the solve with reason Diverged once the
	// relative residual exceeds DivTol times the initial one; 0 never.
	DivTol float64
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
	// TrueEvery and TrueProgress, when both set, have CG compute the true
	// relative residual ||b - A x||/||b|| of its iterate every TrueEvery
	// iterations, after the iteration's update of x, at the cost of one
	// product with A each time, and pass it to TrueProgress with the
	// recurrence's (with several right-hand sides, the largest of each over
	// the columns still running). BiCGSTAB and GMRES do not call it.
	TrueEvery    int
	TrueProgress func(iter int, recurrence, true float64)
}

// StopVote is this rank's vote to stop, for the iteration's Allreduce: 1
// when Stop asks to, else 0.
func (o *Options) StopVote() float64 {
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

// Finite reports whether v is neither NaN nor infinite.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
