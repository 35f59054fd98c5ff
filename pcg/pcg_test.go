package pcg_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/gentest"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/pcg"
	"github.com/fsai-dist/fsai-dist/problem"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// system is a distributed problem ready to solve on the CPU backend.
type system struct {
	A    *dsmat.Matrix
	op   *dsmat.Operator
	b, x *ddmat.Dense
	full *dsmat.Rows
}

// setup generates spec (scaled by sign), distributes it on the CPU backend
// and sets b = A*1.
func setup(t *testing.T, c *comm.Comm, spec string, sign float64) *system {
	return setupOn(t, c, cpu.New(1), spec, sign)
}

// setupOn is setup on the backend be.
func setupOn(t *testing.T, c *comm.Comm, be backend.Backend, spec string, sign float64) *system {
	t.Helper()
	s, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Generate(0, s.Rows())
	if err != nil {
		t.Fatal(err)
	}
	for k := range full.Val {
		full.Val[k] *= sign
	}
	part := dsmat.NewPartition(full.N, c.Size())
	lo, hi := part.Range(c.Rank())
	rows, err := s.Generate(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	for k := range rows.Val {
		rows.Val[k] *= sign
	}
	sys := bindSystem(t, c, be, part, rows)
	sys.full = full
	return sys
}

// bindSystem distributes the stripes rows of part on be, with b = A*1 and
// x = 0.
func bindSystem(t *testing.T, c *comm.Comm, be backend.Backend, part dsmat.Partition, rows *dsmat.Rows) *system {
	t.Helper()
	op := gentest.Bind(t, c, be, part, rows)
	A := op.Matrix()
	sys := &system{A: A, op: op}
	sys.b, _ = ddmat.NewVector(c, be, A.LocalRows())
	sys.x, _ = ddmat.NewVector(c, be, A.LocalRows())
	be.Fill(sys.x.V, 1)
	if err := op.Apply(sys.b.V, sys.x.V); err != nil {
		t.Fatal(err)
	}
	be.Fill(sys.x.V, 0)
	return sys
}

// serialJacobiPCG is an independent textbook PCG on the whole matrix, with
// b = A*1 and x0 = 0; it returns the iteration count at tolerance tol.
func serialJacobiPCG(a *dsmat.Rows, tol float64) int {
	n := int(a.N)
	mul := func(y, x []float64) {
		for i := 0; i < n; i++ {
			y[i] = 0
			for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
				y[i] += a.Val[k] * x[a.Col[k]]
			}
		}
	}
	dot := func(x, y []float64) (s float64) {
		for i := range x {
			s += x[i] * y[i]
		}
		return s
	}
	diag := make([]float64, n)
	for i := 0; i < n; i++ {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			if a.Col[k] == int64(i) {
				diag[i] = a.Val[k]
			}
		}
	}
	ones, b := make([]float64, n), make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	mul(b, ones)
	x, r, z, p, q := make([]float64, n), append([]float64(nil), b...), make([]float64, n), make([]float64, n), make([]float64, n)
	bnorm := math.Sqrt(dot(b, b))
	for i := range z {
		z[i] = r[i] / diag[i]
	}
	copy(p, z)
	rz := dot(r, z)
	for it := 1; it < 10000; it++ {
		mul(q, p)
		alpha := rz / dot(p, q)
		for i := range x {
			x[i] += alpha * p[i]
			r[i] -= alpha * q[i]
			z[i] = r[i] / diag[i]
		}
		if math.Sqrt(dot(r, r))/bnorm <= tol {
			return it
		}
		rzNew := dot(r, z)
		for i := range p {
			p[i] = z[i] + rzNew/rz*p[i]
		}
		rz = rzNew
	}
	return -1
}

func TestJacobiPCGMatchesSerial(t *testing.T) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, spec := range []string{"poisson7:10", "diffusion:8", "aniso:8", "poisson27:7"} {
				sys := setup(t, c, spec, 1)
				M, err := pcg.NewJacobi(sys.A, sys.op.Backend())
				if err != nil {
					t.Fatal(err)
				}
				res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 5000})
				if err != nil {
					t.Fatal(err)
				}
				want := serialJacobiPCG(sys.full, 1e-8)
				if !res.Converged || res.RelRes > 1e-8*1.01 {
					t.Fatalf("%s: converged %v, reason %s, true relres %.3g", spec, res.Converged, res.Reason, res.RelRes)
				}
				if d := res.Iterations - want; d < -1 || d > 1 {
					t.Fatalf("%s on %d ranks: %d iterations, serial PCG %d", spec, np, res.Iterations, want)
				}
				if len(res.History) != res.Iterations+1 {
					t.Fatalf("%s: history has %d entries for %d iterations", spec, len(res.History), res.Iterations)
				}
				// the solution is all ones
				host := make([]float64, sys.x.Rows)
				if err := sys.x.Get(host); err != nil {
					t.Fatal(err)
				}
				for i, v := range host {
					if math.Abs(v-1) > 1e-5 {
						t.Fatalf("%s: x[%d] = %g, want 1", spec, sys.A.First()+int64(i), v)
					}
				}
			}
		})
	}
}

func TestPCGStops(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		// negative definite: plain CG breaks down at the first p'Ap
		sys := setup(t, c, "poisson7:6", -1)
		res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 100})
		if err != nil {
			t.Fatal(err)
		}
		if res.Converged || res.Reason != pcg.Breakdown || res.Detail == "" {
			t.Fatalf("negative definite: reason %q detail %q", res.Reason, res.Detail)
		}
		if _, err := pcg.NewJacobi(sys.A, sys.op.Backend()); err == nil {
			t.Fatal("jacobi accepted a negative diagonal")
		}

		// too few iterations
		sys = setup(t, c, "poisson7:8", 1)
		res, err = pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Converged || res.Reason != pcg.MaxIterations || res.Iterations != 3 {
			t.Fatalf("maxit 3: converged %v reason %q after %d", res.Converged, res.Reason, res.Iterations)
		}

		// the exact solution as initial guess: done before the first iteration
		sys.op.Backend().Fill(sys.x.V, 1)
		res, err = pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged || res.Iterations != 0 || res.RelRes > 1e-14 {
			t.Fatalf("exact x0: converged %v after %d, relres %g", res.Converged, res.Iterations, res.RelRes)
		}

		// b = 0 gives x = 0 at once
		sys.op.Backend().Fill(sys.b.V, 0)
		res, err = pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 3})
		if err != nil || !res.Converged {
			t.Fatalf("b = 0: converged %v, err %v", res.Converged, err)
		}
		if n, _ := ddmat.Norm(sys.x); n != 0 {
			t.Fatalf("b = 0: ||x|| = %g", n)
		}
	})
}

// neumann is the stripe [lo, hi) of the n x n 1D Laplacian with Neumann
// ends, tridiag(-1, 2, -1) with corner entries 1: singular, with the
// constants as null space.
func neumann(n, lo, hi int64) *dsmat.Rows {
	r := &dsmat.Rows{N: n, First: lo, RowPtr: []int64{0}}
	for i := lo; i < hi; i++ {
		d := 2.0
		if i == 0 || i == n-1 {
			d = 1
		}
		for _, e := range []struct {
			col int64
			val float64
		}{{i - 1, -1}, {i, d}, {i + 1, -1}} {
			if e.col >= 0 && e.col < n {
				r.Col, r.Val = append(r.Col, e.col), append(r.Val, e.val)
			}
		}
		r.RowPtr = append(r.RowPtr, int64(len(r.Col)))
	}
	return r
}

// TestStagnation: b = e_1 has a component in the null space of the
// Neumann Laplacian, so the residual cannot fall below it. On the path graph
// CG does not reduce ||r|| at all for many iterations, so the test stops
// after exactly the window.
func TestStagnation(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		const n = 300
		part := dsmat.NewPartition(n, c.Size())
		lo, hi := part.Range(c.Rank())
		A, err := dsmat.New(c, part, neumann(n, lo, hi))
		if err != nil {
			t.Fatal(err)
		}
		be := cpu.New(1)
		op, err := A.Bind(be, backend.Double)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ddmat.NewVector(c, be, A.LocalRows())
		x, _ := ddmat.NewVector(c, be, A.LocalRows())
		host := make([]float64, A.LocalRows())
		if lo == 0 {
			host[0] = 1
		}
		if err := b.Set(host); err != nil {
			t.Fatal(err)
		}
		res, err := pcg.Solve(op, pcg.None{}, b, x, pcg.Options{Tol: 1e-8, MaxIt: 1000, Stagnation: 40})
		if err != nil {
			t.Fatal(err)
		}
		if res.Converged || res.Reason != pcg.Stagnation || res.Iterations != 40 || res.Detail == "" {
			t.Fatalf("reason %q after %d iterations (%s), want stagnation after 40", res.Reason, res.Iterations, res.Detail)
		}
		// without the test the same solve runs to the iteration limit
		be.Fill(x.V, 0)
		res, err = pcg.Solve(op, pcg.None{}, b, x, pcg.Options{Tol: 1e-8, MaxIt: 60})
		if err != nil || res.Reason != pcg.MaxIterations {
			t.Fatalf("no stagnation test: reason %q, err %v", res.Reason, err)
		}
	})
}

// TestStop: a stop request on one rank only stops every rank after the same
// iteration, with the iterate of that iteration in x.
func TestStop(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		sys := setup(t, c, "poisson7:10", 1)
		calls := 0
		stop := func() bool {
			calls++
			return c.Rank() == 1 && calls > 5 // asked during iteration 5
		}
		res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 100, Stop: stop})
		if err != nil {
			t.Fatal(err)
		}
		if res.Converged || res.Reason != pcg.Interrupted || res.Iterations != 5 || len(res.History) != 6 {
			t.Fatalf("reason %q after %d iterations, want interrupted after 5", res.Reason, res.Iterations)
		}
		// x is the 5th iterate: resuming from it takes 5 fewer iterations
		// than the whole solve, give or take one
		full := setup(t, c, "poisson7:10", 1)
		all, err := pcg.Solve(full.op, pcg.None{}, full.b, full.x, pcg.Options{Tol: 1e-8, MaxIt: 100})
		if err != nil {
			t.Fatal(err)
		}
		rest, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !rest.Converged || math.Abs(rest.History[0]-res.RelRes) > 1e-12 || rest.Iterations >= all.Iterations {
			t.Fatalf("resume: %d iterations from relres %g (interrupted at %g), %d from scratch",
				rest.Iterations, rest.History[0], res.RelRes, all.Iterations)
		}
	})
}

// TestLargeMatrix: poisson7:6 times 1e300, whose ||b|| squared overflows,
// solves as poisson7:6 does: the norms are robust to the scaling.
func TestLargeMatrix(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		base := setup(t, c, "poisson7:6", 1)
		want, err := pcg.Solve(base.op, pcg.None{}, base.b, base.x, pcg.Options{Tol: 1e-8, MaxIt: 100})
		if err != nil {
			t.Fatal(err)
		}
		sys := setup(t, c, "poisson7:6", 1e300)
		res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged || res.RelRes > 1e-8 || res.Iterations != want.Iterations {
			t.Fatalf("reason %q after %d iterations (relres %.3g), want converged after %d", res.Reason, res.Iterations, res.RelRes, want.Iterations)
		}
	})
}

// TestTrueProgress monitors the true residual every 3 iterations of a
// solve stopped after 6: the calls come at iterations 3 and 6 with the
// history's recurrence, the true residual is near it (poisson7 keeps the
// two close), and at iteration 6 it is the true residual the solve ends
// with, of the same x.
func TestTrueProgress(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		sys := setup(t, c, "poisson7:10", 1)
		type call struct {
			it         int
			rec, truth float64
		}
		var calls []call
		opt := pcg.Options{Tol: 1e-8, MaxIt: 6, TrueEvery: 3, TrueProgress: func(it int, rec, truth float64) {
			calls = append(calls, call{it, rec, truth})
		}}
		res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, opt)
		if err != nil {
			t.Fatal(err)
		}
		if res.Iterations != 6 || len(calls) != 2 || calls[0].it != 3 || calls[1].it != 6 {
			t.Fatalf("%d iterations, calls %+v: want calls at 3 and 6", res.Iterations, calls)
		}
		for _, cl := range calls {
			if cl.rec != res.History[cl.it] || math.Abs(cl.truth-cl.rec) > 1e-6*cl.rec {
				t.Errorf("iteration %d: recurrence %g (history %g), true %g", cl.it, cl.rec, res.History[cl.it], cl.truth)
			}
		}
		if last := calls[1].truth; math.Abs(last-res.RelRes) > 1e-12*res.RelRes {
			t.Errorf("true residual %g at iteration 6, the solve ends with %g", last, res.RelRes)
		}
	})
}
