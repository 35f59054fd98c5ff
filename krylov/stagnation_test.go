package krylov

import "testing"

// TestStagnationRule: a plateau stops the solve only once it has lasted as
// long as the iterations before it, and at least the window.
func TestStagnationRule(t *testing.T) {
	s := stagnation{window: 50, best: 1}
	relres, it := 1.0, 0
	for ; it <= 100; it++ { // a new low at every iteration up to 100
		if s.stuck(it, relres) {
			t.Fatalf("stuck at iteration %d while converging", it)
		}
		relres *= 0.99
	}
	for ; it < 200; it++ { // then a plateau, which may last 100 iterations
		if s.stuck(it, 2*relres) {
			t.Fatalf("stuck at iteration %d, %d iterations into the plateau", it, it-100)
		}
	}
	if !s.stuck(200, 2*relres) {
		t.Fatal("not stuck after a plateau as long as the solve before it")
	}
	s = stagnation{window: 50, best: 1}
	for it := range 50 {
		if s.stuck(it, 1) {
			t.Fatalf("stuck at iteration %d, before the window", it)
		}
	}
	if !s.stuck(50, 1) {
		t.Fatal("not stuck after the window")
	}
}

// TestRestarted: a true residual taken at a restart is no replacement;
// the solve has converged when it meets the tolerance, and goes on when it
// does not.
func TestRestarted(t *testing.T) {
	m := NewMonitor(Options{Tol: 1e-8, MaxIt: 100}, 1)
	m.Record(1, 1e-3)
	m.Restarted(2e-3)
	if !m.Check(2, false) || m.Replacements != 0 || m.RecurrenceRelRes != 2e-3 {
		t.Fatalf("restart above the tolerance: active %v, %d replacements, estimate %g", m.Active(), m.Replacements, m.RecurrenceRelRes)
	}
	m.Record(2, 1e-7)
	m.Restarted(5e-9)
	if m.Check(3, false) || !m.Converged || m.Replacements != 0 {
		t.Fatalf("restart at the tolerance: %s, %d replacements", m.Reason, m.Replacements)
	}
}

// TestDiverged: a residual above DivTol times the initial one stops the
// solve with reason diverged; at or below it, or with DivTol 0, it goes on.
func TestDiverged(t *testing.T) {
	m := NewMonitor(Options{Tol: 1e-8, MaxIt: 100, DivTol: 1e3}, 0.5)
	m.Record(1, 500)
	if !m.Check(2, false) {
		t.Fatalf("stopped at 1000 times the initial residual: %s", m.Detail)
	}
	m.Record(2, 501)
	if m.Check(3, false) || m.Reason != Diverged || m.Converged {
		t.Fatalf("relative residual 501 from 0.5 with DivTol 1e3: active %v, reason %q", m.Active(), m.Reason)
	}
	m = NewMonitor(Options{Tol: 1e-8, MaxIt: 100}, 0.5)
	m.Record(1, 1e300)
	if !m.Check(2, false) {
		t.Fatalf("DivTol 0 stopped the solve: %s", m.Reason)
	}
}
