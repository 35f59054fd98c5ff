package solver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/solver"
)

// TestElasticity: on 1 and 3 ranks each rank's stripe of elasticity,
// generated on its own, equals bit for bit the same rows of the whole
// matrix; Jacobi and aFSAI PCG solve it (converged on the true residual,
// x near the exact solution), aFSAI in fewer iterations. The iteration
// counts are logged.
func TestElasticity(t *testing.T) {
	const spec = "elasticity:6:1e3:0.45"
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			s, mine := stripe(t, c, spec)
			lo, hi := mine.First, mine.First+int64(mine.Count())
			whole, err := s.Generate(0, s.Rows())
			if err != nil {
				t.Fatal(err)
			}
			a, b := whole.RowPtr[lo], whole.RowPtr[hi]
			same := slices.Equal(mine.Col, whole.Col[a:b]) && slices.Equal(mine.Val, whole.Val[a:b])
			for i, p := range mine.RowPtr {
				same = same && p == whole.RowPtr[lo+int64(i)]-a
			}
			if !same {
				t.Errorf("rank %d: rows [%d,%d) differ from the whole matrix's", c.Rank(), lo, hi)
			}

			sys := newSystem(t, c, spec)
			its := map[string]int{}
			for _, prec := range []string{"jacobi", "afsai"} {
				its[prec] = solve(t, c, sys, newSolver(t, sys.matrix(t, c, sys.vals), prec), sys.vals, wave)
			}
			t.Logf("%s on %d ranks: Jacobi %d iterations, aFSAI %d", spec, np, its["jacobi"], its["afsai"])
			if its["afsai"] >= its["jacobi"] {
				t.Errorf("aFSAI %d iterations, Jacobi %d", its["afsai"], its["jacobi"])
			}
		})
	}
}

// TestCoarseSpace: on elasticity with its geometry, the default options
// (coarse auto) give aFSAI and static FSAI the rigid-body coarse space and
// Jacobi none; the coarse space cuts aFSAI's iterations against -coarse
// off; -coarse on gives it to Jacobi too; a matrix without a geometry gets
// none under auto and an error under on, and one whose geometry has one
// unknown a node gets the constant (one box, all points at one place) under
// on only; UpdateValues refreshes it (D A D solved to the tolerance). On 1
// and 3 ranks; the counts are logged.
func TestCoarseSpace(t *testing.T) {
	const spec = "elasticity:6:1e3:0.45"
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			s, _ := stripe(t, c, spec)
			sys := newSystem(t, c, spec)
			coords, bs, ok := s.Geometry(sys.first, sys.first+int64(len(sys.rowPtr)-1))
			if !ok || bs != 3 {
				t.Fatalf("%s: geometry %v, block size %d", spec, ok, bs)
			}
			withGeometry := func() *solver.Matrix {
				A := sys.matrix(t, c, sys.vals)
				if err := A.SetGeometry(coords, bs); err != nil {
					t.Fatal(err)
				}
				return A
			}
			its := map[string]int{}
			for _, tc := range []struct {
				prec, coarse string
				want         bool
			}{
				{"afsai", "auto", true}, {"afsai", "off", false}, {"fsai", "auto", true},
				{"jacobi", "auto", false}, {"jacobi", "on", true},
			} {
				opt := solver.DefaultOptions()
				opt.Prec, opt.Coarse, opt.Backend, opt.Threads = tc.prec, tc.coarse, "cpu", 1
				sol, err := solver.New(withGeometry(), nil, opt)
				if err != nil {
					t.Fatal(err)
				}
				if got := sol.CoarseInfo() != nil; got != tc.want {
					t.Errorf("%s with -coarse %s: coarse space %v, want %v", tc.prec, tc.coarse, got, tc.want)
				}
				if tc.prec != "jacobi" && sol.FSAIInfo() == nil {
					t.Errorf("%s with -coarse %s: no FSAIInfo", tc.prec, tc.coarse)
				}
				its[tc.prec+" "+tc.coarse] = solve(t, c, sys, sol, sys.vals, wave)
				if tc.prec == "afsai" && tc.coarse == "auto" {
					vals := sys.scaled(weight)
					if err := sol.UpdateValues(vals); err != nil {
						t.Fatal(err)
					}
					its["afsai auto, updated"] = solve(t, c, sys, sol, vals, wave)
				}
				sol.Free()
			}
			t.Logf("%s on %d ranks: %v", spec, np, its)
			if its["afsai auto"] >= its["afsai off"] || its["jacobi on"] >= its["jacobi auto"] {
				t.Errorf("the coarse space does not cut the iterations: %v", its)
			}

			opt := solver.DefaultOptions()
			opt.Backend, opt.Threads = "cpu", 1
			sol, err := solver.New(sys.matrix(t, c, sys.vals), nil, opt)
			if err != nil {
				t.Fatal(err)
			}
			if sol.CoarseInfo() != nil {
				t.Error("a coarse space without a geometry")
			}
			sol.Free()

			// A scalar field (one unknown a node) gets the constant only when
			// asked.
			scalar := solver.DefaultOptions()
			scalar.Backend, scalar.Threads = "cpu", 1
			for _, mode := range []string{"auto", "on"} {
				A := sys.matrix(t, c, sys.vals)
				origin := make([]float64, 3*(len(sys.rowPtr)-1)) // every point at the origin
				if err := A.SetGeometry(origin, 1); err != nil {
					t.Fatal(err)
				}
				scalar.Coarse = mode
				sol, err := solver.New(A, nil, scalar)
				if err != nil {
					t.Fatal(err)
				}
				if got := sol.CoarseInfo(); (got != nil) != (mode == "on") || got != nil && got.Size != 1 {
					t.Errorf("block size 1, -coarse %s: coarse space %+v", mode, got)
				}
				sol.Free()
			}
			opt.Coarse = "on"
			if _, err := solver.New(sys.matrix(t, c, sys.vals), nil, opt); err == nil || !strings.Contains(err.Error(), "no geometry") {
				t.Errorf("-coarse on without a geometry: %v", err)
			}
		})
	}
}
