package krylov

import (
	"fmt"
	"math"
)

// DefaultStagnation is Options.Stagnation's default for the CLI
// (-stagnation) and the library: 0, no stagnation test, as in PETSc. The
// residual of CG is not monotone; on hard problems it stays above its
// start for hundreds of iterations before it falls, and a window would
// stop such solves, which converge.
const DefaultStagnation = 0

// Monitor applies the stop rule of fsai-dist's Krylov methods to one
// right-hand side; docs/convergence.md states it. The method records the
// relative residual its recurrence estimates after each iteration (Record).
// When that estimate meets the tolerance (NeedsTrue), the method computes
// the true relative residual ||b - A x||/||b|| from x and hands it to
// Confirm: at or below the tolerance the solve has converged; above it, the
// method replaces its recurrence residual by the true one and goes on
// (residual replacement). Converged is thus only ever declared on a true
// residual. Check, before each iteration, decides whether to stop.
type Monitor struct {
	Result
	tol   float64
	maxIt int
	// relres is the current estimate: the recurrence's, or a true
	// residual (fromTrue) at the start and after a replacement.
	relres   float64
	fromTrue bool
	lowTrue  float64 // the lowest true residual a replacement found
	stag     stagnation
	// diverged is the relative residual above which the solve has
	// diverged (DivTol times the initial one; +Inf when off).
	diverged float64
}

// NewMonitor starts the stop rule of a solve with opt's tolerance,
// iteration limit and stagnation window, from the true relative residual of
// the initial guess, relres0 = ||b - A x0||/||b||.
func NewMonitor(opt Options, relres0 float64) Monitor {
	m := Monitor{tol: opt.Tol, maxIt: opt.MaxIt, lowTrue: math.Inf(1),
		stag: stagnation{window: opt.Stagnation, best: relres0}, diverged: math.Inf(1)}
	if opt.DivTol > 0 {
		m.diverged = opt.DivTol * relres0
	}
	m.History = []float64{relres0}
	m.relres, m.fromTrue, m.RecurrenceRelRes = relres0, true, relres0
	return m
}

// Active reports whether the solve goes on.
func (m *Monitor) Active() bool { return m.Reason == "" }

// Record appends the recurrence's relative residual of iteration it.
func (m *Monitor) Record(it int, relres float64) {
	m.Iterations = it
	m.History = append(m.History, relres)
	m.relres, m.fromTrue, m.RecurrenceRelRes = relres, false, relres
}

// NeedsTrue reports whether the recurrence's estimate meets the tolerance,
// so that the true residual must be computed and passed to Confirm.
func (m *Monitor) NeedsTrue() bool { return m.Active() && !m.fromTrue && m.relres <= m.tol }

// Confirm takes the true relative residual of the current iterate (after
// iteration it-1) and reports whether the method must replace its
// recurrence residual by the true one: the true residual is above the
// tolerance. A replacement restarts the stagnation test from it.
func (m *Monitor) Confirm(it int, relres float64) (replace bool) {
	m.relres, m.fromTrue = relres, true
	if relres <= m.tol {
		return false
	}
	m.Replacements++
	m.RecurrenceRelRes = relres
	m.lowTrue = math.Min(m.lowTrue, relres)
	m.stag = stagnation{window: m.stag.window, best: relres, bestIt: it - 1}
	return true
}

// Restarted takes the true relative residual that a restarted method
// (GMRES(m)) computes from x at a restart, before its estimate met the
// tolerance: it takes the estimate's place, and the solve has converged
// when it meets the tolerance. It is not a replacement.
func (m *Monitor) Restarted(relres float64) {
	m.relres, m.fromTrue, m.RecurrenceRelRes = relres, true, relres
}

// Check decides, before iteration it, whether the solve stops: converged
// (on a true residual only), a residual that is NaN or infinite or has
// diverged, stop (a rank asked to), the iteration limit, or stagnation. It reports whether
// the solve goes on.
func (m *Monitor) Check(it int, stop bool) bool {
	switch relres := m.relres; {
	case !Finite(relres):
		m.Stop(NaN, "the residual is %v at iteration %d", relres, it-1)
	case m.fromTrue && relres <= m.tol:
		m.Converged, m.Reason = true, Converged
	case relres > m.diverged:
		m.Stop(Diverged, "the relative residual is %.3g at iteration %d, above %.3g times the initial %.3g (-divtol)",
			relres, it-1, m.diverged/m.History[0], m.History[0])
	case stop:
		m.Stop(Interrupted, "a rank asked the solve to stop (Options.Stop)")
	case it > m.maxIt:
		m.Stop(MaxIterations, "%s", m.limitDetail())
	case m.stag.stuck(it-1, relres):
		m.Stop(Stagnation, "the relative residual has stayed above %.4g (0.1%% below its low at iteration %d) for %d iterations",
			StagnationFactor*m.stag.best, m.stag.bestIt, it-1-m.stag.bestIt)
	}
	return m.Active()
}

// limitDetail says why the iteration limit was reached: when the
// recurrence met the tolerance but the true residual did not, the accuracy
// that double precision attains on the system is the limit, not the number
// of iterations.
func (m *Monitor) limitDetail() string {
	if m.Replacements > 0 {
		return fmt.Sprintf("the recurrence's residual met the tolerance %.3g %d times, but the true residual ||b - A x||/||b|| "+
			"was then at best %.3g: the attainable accuracy on this system is above the tolerance (ill-conditioned or nearly singular)",
			m.tol, m.Replacements, m.lowTrue)
	}
	return fmt.Sprintf("the relative residual is %.3g after %d iterations, above the tolerance %.3g", m.relres, m.maxIt, m.tol)
}

// Stop ends the solve for reason, with a detail that says how.
func (m *Monitor) Stop(reason Reason, format string, args ...any) {
	m.Reason = reason
	m.Detail = fmt.Sprintf(format, args...)
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
