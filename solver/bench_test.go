package solver_test

import (
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/gentest"
	"github.com/fsai-dist/fsai-dist/solver"
)

var (
	benchProblem = flag.String("solver.problem", "poisson7:30", "built-in problem of the benchmarks")
	benchBackend = flag.String("solver.backend", "cpu", "backend of the benchmarks: cpu, cuda or auto")
	benchPrec    = flag.String("solver.prec", "afsai", "preconditioner of the benchmarks")
)

// BenchmarkUpdate times the ways to take new values on the same pattern,
// each from the same new values: SetValues (the matrix only), UpdateValues
// (and the preconditioner's values on its pattern), SetValues+Rebuild (a
// full preconditioner set-up), and a Solve for comparison; it logs the
// stages of the last set-up. It runs on one
// rank as it is, or on several under mpirun with -test.benchtime=Nx (every
// rank must run the same count).
func BenchmarkUpdate(b *testing.B) {
	s, rows, c := benchSolver(b)
	defer s.Free()
	vals := make([]float64, len(rows.Val))
	for k, v := range rows.Val {
		vals[k] = 1.25 * v
	}
	run := func(name string, step func() error) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := step(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("SetValues", func() error { return s.SetValues(vals) })
	// The first UpdateValues also finds what the later ones reuse (G's
	// patterns in the local numbering, the plan of G'): outside the timing.
	if err := s.UpdateValues(vals); err != nil {
		b.Fatal(err)
	}
	run("UpdateValues", func() error { return s.UpdateValues(vals) })
	if t, ok := s.UpdateTimes(); ok && c.Rank() == 0 {
		fmt.Printf("last UpdateValues on %s: gather %.3f s, compute %.3f s, transpose %.3f s, upload %.3f s; rows on the device %t, fallback rows %d\n",
			s.Backend().Name(), t.GatherS, t.ComputeS, t.TransposeS, t.UploadS, t.OnDevice, t.FallbackRows)
	}
	run("SetValues+Rebuild", func() error {
		if err := s.SetValues(vals); err != nil {
			return err
		}
		return s.Rebuild()
	})
	rhs := make([]float64, len(rows.RowPtr)-1)
	for i := range rhs {
		rhs[i] = 1
	}
	x := make([]float64, len(rhs))
	run("Solve", func() error {
		clear(x)
		_, err := s.Solve(rhs, x)
		return err
	})
	if p, ok := s.Preconditioner().(*afsai.Preconditioner); ok && c.Rank() == 0 {
		in := p.Info
		fmt.Printf("%s set-up on %s: gather %.3f s, compute %.3f s (%s), transpose %.3f s, upload %.3f s; density %.2f\n",
			p.Name(), s.Backend().Name(), in.GatherS, in.ComputeS, in.SetupDevice, in.TransposeS, in.UploadS, in.Density)
	}
}

// benchSolver sets up a solver for the benchmarks' problem on this rank's
// rows, which it returns too.
func benchSolver(b *testing.B) (*solver.Solver, *dsmat.Rows, *comm.Comm) {
	if err := comm.Init(); err != nil {
		b.Fatal(err)
	}
	c := comm.World()
	_, _, rows := gentest.Stripe(b, c, *benchProblem)
	A, err := solver.NewMatrix(c, rows.N, rows.First, rows.RowPtr, rows.Col, rows.Val)
	if err != nil {
		b.Fatal(err)
	}
	opt := solver.DefaultOptions()
	opt.Prec, opt.Backend = *benchPrec, *benchBackend
	s, err := solver.New(A, nil, opt)
	if err != nil {
		b.Fatal(err)
	}
	return s, rows, c
}

// BenchmarkManyRHS times 8 right-hand sides solved one after the other
// (Solve) and together (SolveMany), the same 8 in both: column k is
// sin((k+1) * 0.001 * i) + 1 for global row i, a different smooth vector
// each. It prints the ratio of the two and the iterations.
func BenchmarkManyRHS(b *testing.B) {
	const k = 8
	s, rows, c := benchSolver(b)
	defer s.Free()
	n := rows.Count()
	rhs := make([]float64, k*n)
	for col := range k {
		for i := range n {
			g := float64(rows.First + int64(i))
			rhs[col*n+i] = math.Sin(float64(col+1)*0.001*g) + 1
		}
	}
	x := make([]float64, k*n)
	// Steady state, as in a simulation's time loop: the first calls
	// allocate the block vectors and pin the host buffers.
	if _, err := s.SolveMany(rhs, x, k); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Solve(rhs[:n], x[:n]); err != nil {
		b.Fatal(err)
	}
	var separate, together float64
	var itsSeparate, itsTogether int
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			clear(x)
			t := time.Now()
			itsSeparate = 0
			for col := range k {
				res, err := s.Solve(rhs[col*n:(col+1)*n], x[col*n:(col+1)*n])
				if err != nil {
					b.Fatal(err)
				}
				itsSeparate = max(itsSeparate, res.Iterations)
			}
			separate = time.Since(t).Seconds()
		}
	})
	b.Run("together", func(b *testing.B) {
		for b.Loop() {
			clear(x)
			t := time.Now()
			res, err := s.SolveMany(rhs, x, k)
			if err != nil {
				b.Fatal(err)
			}
			together = time.Since(t).Seconds()
			itsTogether = 0
			for _, r := range res {
				itsTogether = max(itsTogether, r.Iterations)
			}
		}
	})
	if c.Rank() == 0 {
		fmt.Printf("%d right-hand sides, %s, %s on %s: separate %.3f s (at most %d iterations), together %.3f s (at most %d): ratio %.2f\n",
			k, *benchProblem, *benchPrec, s.Backend().Name(), separate, itsSeparate, together, itsTogether, together/separate)
	}
}
