package solver_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/solver"
)

// callTimeout bounds a call that must return without waiting on other
// ranks: one that waits that long entered a collective the others did not.
const callTimeout = 20 * time.Second

// within runs f and returns its error, or fails t when f has not returned
// after callTimeout.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(callTimeout):
		t.Fatalf("%s: no return after %v: it waits on other ranks", what, callTimeout)
		return nil
	}
}

// wantError checks that err is an error whose message holds want.
func wantError(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: accepted, want an error with %q", what, want)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q, want one with %q", what, err, want)
	}
}

// withDiagonal returns the system's values with the diagonal entry of
// global row g (from 0) set to d on the rank that holds it.
func (s *system) withDiagonal(g int64, d float64) []float64 {
	vals := slices.Clone(s.vals)
	if i := g - s.first; i >= 0 && i < int64(len(s.rowPtr)-1) {
		for k := s.rowPtr[i]; k < s.rowPtr[i+1]; k++ {
			if s.cols[k] == g {
				vals[k] = d
			}
		}
	}
	return vals
}

// TestSetupRejects: a matrix whose diagonal the preconditioner's set-up
// refuses (negative or zero) makes New
// return an error on every rank, without a panic: the ranks that found it
// name the entry by its global row counting from 1, the others return
// comm.ErrPeer.
func TestSetupRejects(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) { setupRejects(t, c, "cpu") })
	}
}

// TestSetupRejectsGPU is TestSetupRejects on the GPU, whose set-up finds
// the entry in its own kernels.
func TestSetupRejectsGPU(t *testing.T) {
	if n, err := gpu.Available(); err != nil || n == 0 {
		t.Skip("no GPU")
	}
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) { setupRejects(t, c, "cuda") })
}

func setupRejects(t *testing.T, c *comm.Comm, be string) {
	sys := newSystem(t, c, "poisson7:5")
	g := sys.n - 7 // on the last rank
	for _, tc := range []struct {
		prec string
		d    float64
		want string
	}{
		{"afsai", -4, fmt.Sprintf("afsai: diagonal entry A(%d,%d) = -4 is not positive and finite: the matrix is not SPD", g+1, g+1)},
		{"fsai", 0, fmt.Sprintf("afsai: diagonal entry A(%d,%d) = 0 is not positive and finite", g+1, g+1)},
		{"jacobi", -1, fmt.Sprintf("jacobi: diagonal entry -1 at row %d is not positive: the matrix is not SPD", g+1)},
	} {
		t.Run(fmt.Sprintf("%s/%g", tc.prec, tc.d), func(t *testing.T) {
			A := sys.matrix(t, c, sys.withDiagonal(g, tc.d))
			opt := solver.Options{Prec: tc.prec, Backend: be, Threads: 1}
			err := within(t, "New", func() error { _, err := solver.New(A, nil, opt); return err })
			found := int32(0)
			switch {
			case err == nil:
				t.Fatal("New accepted the matrix")
			case errors.Is(err, comm.ErrPeer):
			default:
				found = 1
				wantError(t, "New", err, tc.want)
			}
			if n, _ := comm.AllreduceScalar(c, comm.Sum, found); n == 0 {
				t.Error("no rank described the error")
			}
		})
	}
}

// gate is a backend that holds the first Upload after arm until release:
// a Solve then waits inside the solver, between its first collective and
// its next, for as long as the test needs.
type gate struct {
	backend.Backend
	armed   atomic.Bool
	inside  chan struct{} // closed when the held Upload starts
	release chan struct{} // closed by the test to let it go on
}

func newGate() *gate {
	return &gate{Backend: cpu.New(1), inside: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) Upload(dst backend.Vector, src []float64) {
	if g.armed.CompareAndSwap(true, false) {
		close(g.inside)
		<-g.release
	}
	g.Backend.Upload(dst, src)
}

// TestConcurrentUse: while one goroutine's Solve runs, every call on the
// same solver from another goroutine (Solve, SolveMany, SetValues,
// UpdateValues, Rebuild, Free) returns ErrBusy at once, on every rank,
// without waiting on the other ranks; the running Solve then returns the
// right solution, and the solver goes on working. Before the check, two
// goroutines calling Solve hung at 3 ranks and gave wrong results on one.
func TestConcurrentUse(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := newSystem(t, c, "poisson7:6")
			A := sys.matrix(t, c, sys.vals)
			be := newGate()
			defer be.Close()
			s, err := solver.New(A, be, solver.Options{Prec: "jacobi"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Free()
			b := sys.mul(sys.vals, wave)
			x := make([]float64, len(b))
			be.armed.Store(true)
			type outcome struct {
				its int
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := s.Solve(b, x)
				done <- outcome{res.Iterations, err}
			}()
			select {
			case <-be.inside:
			case <-time.After(callTimeout):
				t.Fatal("the first Solve did not reach its upload")
			}
			n := len(b)
			for _, call := range []struct {
				name string
				f    func() error
			}{
				{"solve", func() error { _, err := s.Solve(make([]float64, n), make([]float64, n)); return err }},
				{"solve many", func() error { _, err := s.SolveMany(make([]float64, 2*n), make([]float64, 2*n), 2); return err }},
				{"set values", func() error { return s.SetValues(sys.vals) }},
				{"update values", func() error { return s.UpdateValues(sys.vals) }},
				{"rebuild", s.Rebuild},
				{"free", s.Free},
			} {
				err := within(t, call.name, call.f)
				if !errors.Is(err, solver.ErrBusy) {
					t.Errorf("%s during a solve: %v, want ErrBusy", call.name, err)
				}
				wantError(t, call.name, err, "solver: "+call.name+": the solver is in use by another call")
			}
			close(be.release)
			var first outcome
			select {
			case first = <-done:
			case <-time.After(callTimeout):
				t.Fatal("the first Solve did not return")
			}
			if first.err != nil {
				t.Fatal(first.err)
			}
			var worst float64
			for i, v := range x {
				worst = max(worst, math.Abs(v-wave(sys.first+int64(i))))
			}
			if worst, _ = comm.AllreduceScalar(c, comm.Max, worst); worst > 1e-5 {
				t.Errorf("the solve beside the refused calls: max error %g", worst)
			}
			if again := solve(t, c, sys, s, sys.vals, wave); again != first.its {
				t.Errorf("after the refused calls: %d iterations, %d before", again, first.its)
			}
		})
	}
}

// TestFailedUpdate: an UpdateValues that fails (a negative diagonal entry
// on one rank, a NaN, a wrong length) changes nothing: the next Solve gives the same iterate, bit for
// bit, in the same iterations as the one before it. The error names the
// entry by its global row counting from 1.
func TestFailedUpdate(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := newSystem(t, c, "poisson7:5")
			g := sys.n - 3 // on the last rank
			last := c.Rank() == np-1
			for _, prec := range []string{"afsai", "fsai", "jacobi"} {
				t.Run(prec, func(t *testing.T) {
					s := newSolver(t, sys.matrix(t, c, sys.vals), prec)
					b := sys.mul(sys.vals, wave)
					solveOnce := func() ([]float64, int) {
						x := make([]float64, len(b))
						res, err := s.Solve(b, x)
						if err != nil {
							t.Fatal(err)
						}
						return x, res.Iterations
					}
					x0, its0 := solveOnce()
					nan := slices.Clone(sys.vals)
					nan[len(nan)-1] = math.NaN()
					cases := []struct {
						name string
						vals []float64
						want string // on the ranks that hold the bad value
						mine bool
					}{
						{"negative diagonal", sys.withDiagonal(g, -2), fmt.Sprintf("solver: diagonal entry A(%d,%d) = -2 is not positive and finite", g+1, g+1), last},
						{"NaN", nan, "is NaN", true},
						{"short", sys.vals[:len(sys.vals)-1], fmt.Sprintf("solver: %d values for a stripe of %d entries", len(sys.vals)-1, len(sys.vals)), true},
					}
					for _, tc := range cases {
						err := s.UpdateValues(tc.vals)
						if tc.mine {
							wantError(t, tc.name, err, tc.want)
						} else if !errors.Is(err, comm.ErrPeer) {
							t.Errorf("%s: %v on rank %d, want comm.ErrPeer", tc.name, err, c.Rank())
						}
						x, its := solveOnce()
						if its != its0 || !slices.Equal(x, x0) {
							t.Errorf("after a failed update (%s): %d iterations, %d before; same iterate: %v", tc.name, its, its0, slices.Equal(x, x0))
						}
					}
				})
			}
		})
	}
}

// TestMisuse is the table of the Go API's misuse: each call returns the
// error named, on every rank (each rank makes the same mistake), instead of
// a panic or a hang. Calls on a nil, zero or freed Solver and on a nil
// Matrix or communicator are refused before any communication.
func TestMisuse(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			sys := newSystem(t, c, "poisson7:4")
			A := sys.matrix(t, c, sys.vals)
			n, nnz := A.LocalRows(), A.LocalNNZ()
			live := newSolver(t, A, "afsai")
			freed := newSolver(t, A, "jacobi")
			if err := freed.Free(); err != nil {
				t.Fatal(err)
			}
			newMatrix := func(n, first int64, rowPtr, cols []int64, vals []float64) func() error {
				return func() error { _, err := solver.NewMatrix(c, n, first, rowPtr, cols, vals); return err }
			}
			setUp := func(A *solver.Matrix, opt solver.Options) func() error {
				return func() error { _, err := solver.New(A, nil, opt); return err }
			}
			shifted := slices.Clone(sys.rowPtr)
			shifted[0] = 1
			wide := slices.Clone(sys.cols)
			wide[0] = sys.n
			twice := slices.Clone(sys.cols)
			twice[1] = twice[0]
			nan := slices.Clone(sys.vals)
			nan[2] = math.NaN()
			// calls lists every method that ErrFreed applies to, on s.
			calls := func(s *solver.Solver, what string) []misuse {
				return []misuse{
					{what + " solve", func() error { _, err := s.Solve(make([]float64, n), make([]float64, n)); return err }, "solver: solve: the solver was freed, or not made by New", solver.ErrFreed},
					{what + " solve many", func() error { _, err := s.SolveMany(make([]float64, n), make([]float64, n), 1); return err }, "solver: solve many: the solver was freed", solver.ErrFreed},
					{what + " set values", func() error { return s.SetValues(sys.vals) }, "solver: set values: the solver was freed", solver.ErrFreed},
					{what + " update values", func() error { return s.UpdateValues(sys.vals) }, "solver: update values: the solver was freed", solver.ErrFreed},
					{what + " rebuild", s.Rebuild, "solver: rebuild: the solver was freed", solver.ErrFreed},
					{what + " free", s.Free, "solver: free: the solver was freed", solver.ErrFreed},
				}
			}
			cases := []misuse{
				{"nil communicator", func() error {
					_, err := solver.NewMatrix(nil, sys.n, sys.first, sys.rowPtr, sys.cols, sys.vals)
					return err
				}, "solver: new matrix: the communicator is nil", nil},
				{"dimension 0", newMatrix(0, sys.first, sys.rowPtr, sys.cols, sys.vals), "solver: matrix dimension 0", nil},
				{"no rows", newMatrix(sys.n, sys.first, sys.rowPtr[:1], nil, nil), "solver: 1 row pointers: every rank needs at least one row", nil},
				{"rows outside", newMatrix(sys.n, -1, sys.rowPtr, sys.cols, sys.vals), "solver: rows [-1,", nil},
				{"row pointers from 1", newMatrix(sys.n, sys.first, shifted, sys.cols, sys.vals), "solver: row pointers from 1 to", nil},
				{"column out of range", newMatrix(sys.n, sys.first, sys.rowPtr, wide, sys.vals), fmt.Sprintf("column %d is not within [0,%d)", sys.n, sys.n), nil},
				{"column twice", newMatrix(sys.n, sys.first, sys.rowPtr, twice, sys.vals), fmt.Sprintf("solver: row %d: column %d given twice", sys.first, twice[0]), nil},
				{"NaN value", newMatrix(sys.n, sys.first, sys.rowPtr, sys.cols, nan), "solver: value 2 of the stripe is NaN", nil},
				{"nil matrix", setUp(nil, solver.Options{}), "solver: new: the matrix is nil, or not made by NewMatrix", nil},
				{"zero matrix", setUp(&solver.Matrix{}, solver.Options{}), "solver: new: the matrix is nil, or not made by NewMatrix", nil},
				{"unknown preconditioner", setUp(A, solver.Options{Prec: "ilu"}), `solver: preconditioner "ilu" is not one of [afsai fsai jacobi none spai]`, nil},
				{"tolerance 2", setUp(A, solver.Options{Tol: 2}), "solver: tolerance 2 is not in (0,1)", nil},
				{"negative iteration limit", setUp(A, solver.Options{MaxIt: -1}), "solver: iteration limit -1 is negative", nil},
				{"unknown backend", setUp(A, solver.Options{Backend: "gpu"}), `solver: backend "gpu" is not one of [auto cpu cuda]`, nil},
				{"short b", func() error { _, err := live.Solve(make([]float64, n-1), make([]float64, n)); return err },
					fmt.Sprintf("solver: solve: b has %d entries and x %d, this rank has %d rows", n-1, n, n), nil},
				{"no columns", func() error { _, err := live.SolveMany(nil, nil, 0); return err },
					fmt.Sprintf("solver: solve many: b has 0 entries and x 0 for 0 right-hand sides of %d rows on this rank", n), nil},
				{"short values", func() error { return live.SetValues(sys.vals[1:]) }, fmt.Sprintf("solver: %d values for a stripe of %d entries", nnz-1, nnz), nil},
			}
			cases = append(cases, calls(nil, "nil solver")...)
			cases = append(cases, calls(new(solver.Solver), "zero solver")...)
			cases = append(cases, calls(freed, "freed solver")...)
			for _, tc := range cases {
				err := within(t, tc.name, tc.call)
				wantError(t, tc.name, err, tc.want)
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("%s: %v is not %v", tc.name, err, tc.is)
				}
			}
			solve(t, c, sys, live, sys.vals, wave) // the live solver was not disturbed
		})
	}
}

// misuse is a case of TestMisuse: the call, the text its error holds and
// the error it wraps (nil: none in particular).
type misuse struct {
	name string
	call func() error
	want string
	is   error
}

// TestFSAISetsUpOnGPU: on a CUDA backend the solver hands afsai the CUDA
// device, so that aFSAI and static FSAI compute G there (prec_info's
// setup_device), not on the host.
func TestFSAISetsUpOnGPU(t *testing.T) {
	if n, err := gpu.Available(); err != nil || n == 0 {
		t.Skip("no GPU")
	}
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		sys := newSystem(t, c, "poisson7:8")
		for _, prec := range []string{"afsai", "fsai"} {
			s, err := solver.New(sys.matrix(t, c, sys.vals), nil, solver.Options{Prec: prec, Backend: "cuda", Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			if info := s.FSAIInfo(); info == nil || info.SetupDevice != "cuda" {
				t.Errorf("%s on a CUDA backend: set up on %v, want cuda", prec, info)
			}
			if err := s.Free(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
