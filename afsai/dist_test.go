package afsai

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
	krylov "github.com/fsai-dist/fsai-dist/pcg"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// distCase is a matrix distributed over the ranks, with its whole stripe
// list kept on every rank as the serial reference.
type distCase struct {
	name string
	A    *dsmat.Matrix
	full *dsmat.Rows // the whole matrix, on every rank
}

// distCases distributes two generated problems and, where the shared
// matrices are found (testmatrices.Dir), a few of them.
func distCases(t *testing.T, c *comm.Comm) []distCase {
	t.Helper()
	var cases []distCase
	for _, spec := range []string{"poisson7:7", "diffusion:6"} {
		cases = append(cases, distCase{spec, generated(t, c, spec), wholeProblem(t, spec)})
	}
	dir := testmatrices.Dir()
	if dir == "" {
		t.Log(testmatrices.Missing + ": the generated problems alone")
		return cases
	}
	for _, name := range []string{"nos6", "494_bus", "bcsstk15"} {
		A := testmatrices.ReadDistributed(t, c, filepath.Join(dir, name+".mtx"))
		cases = append(cases, distCase{name, A, testmatrices.Stripe(readMM(t, name))})
	}
	return cases
}

// generated distributes the problem spec over the ranks of c, each rank
// generating its own rows.
func generated(t *testing.T, c *comm.Comm, spec string) *dsmat.Matrix {
	return testmatrices.Generated(t, c, spec)
}

// entry returns a_ij of a whole matrix.
func entry(full *dsmat.Rows, i, j int64) float64 {
	for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
		if full.Col[k] == j {
			return full.Val[k]
		}
	}
	return 0
}

// localFactor collects dc's local system within reach and computes this
// rank's rows of G with cfg.
func localFactor(t *testing.T, dc distCase, cfg Config, reach int) (*localSystem, *csr.Matrix[float64]) {
	t.Helper()
	ls, err := gatherLocal(dc.A, cfg.power(), reach, cfg.Setup, true)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := computeFactor(ls, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ls, g
}

// TestGatherLocal: the assembled local system is exactly the submatrix of A
// on the rows and columns of the ranks in the set.
func TestGatherLocal(t *testing.T) {
	for _, np := range []int{1, 2, 3, 4} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				for power := 1; power <= 3; power++ {
					ls, err := gatherLocal(dc.A, power, power, backend.Double, true) // rows within power hops only
					if err != nil {
						t.Fatal(err)
					}
					// in single precision: the same system, its values rounded
					ls32, err := gatherLocal(dc.A, power, power, backend.Single, true)
					if err != nil {
						t.Fatal(err)
					}
					// in two parts, which join into it
					a32 := ls32.matrix32()
					if want := csr.Convert[float32](ls.A); !slices.Equal(a32.RowPtr, want.RowPtr) ||
						!slices.Equal(a32.ColIdx, want.ColIdx) || !slices.Equal(a32.Val, want.Val) || ls32.A != nil {
						t.Fatalf("%s power %d: the single-precision local system is not the double one rounded", dc.name, power)
					}
					if err := CheckSplit(*ls32.split, DefaultParams()); err != nil {
						t.Fatalf("%s power %d: %v", dc.name, power, err)
					}
					if got, want := ls32.split.LongestRow(), longestRow(ls.A); got != want {
						t.Errorf("%s power %d: longest row %d, the joined system's %d", dc.name, power, got, want)
					}
					if ls.A.Check() != nil {
						t.Fatal(ls.A.Check())
					}
					global := ls.globals()
					m := len(global)
					for i := 0; i < m; i++ {
						for j := 0; j < m; j++ {
							if got, want := ls.A.At(i, j), entry(dc.full, global[i], global[j]); got != want {
								t.Fatalf("%s power %d: local (%d,%d) = global (%d,%d): %g, want %g",
									dc.name, power, i, j, global[i], global[j], got, want)
							}
						}
					}
					if own := ls.ownRows(); len(own) != dc.A.LocalRows() || (len(own) > 0 && own[len(own)-1] != m-1) {
						t.Fatalf("%s: own rows %v are not the last of %d", dc.name, own, m)
					}
					if power == 1 && c.Rank() > 0 && dc.A.LocalRows() > 0 && m == dc.A.LocalRows() && len(dc.A.Off) > 0 && dc.A.Off[0].Rank < c.Rank() {
						t.Fatalf("%s: rank has a left neighbour but gathered nothing", dc.name)
					}
				}
			}
		})
	}
}

// TestReachGivesSameFactor: collecting only the rows within the set-up's
// reach gives the G that whole stripes give, bit for bit, for adaptive
// set-ups of few steps and static FSAI of powers 1 and 2 (whose reach is
// short enough to leave rows out of these small matrices, which the test
// checks happens).
func TestReachGivesSameFactor(t *testing.T) {
	for _, np := range []int{2, 3, 4} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			smaller := 0
			for _, dc := range distCases(t, c) {
				for _, cfg := range reachConfigs([]int{1, 3, 5}, []int{1, 2}) {
					var rows [2]*dsmat.Rows
					var sizes [2]int
					for k, reach := range []int{cfg.reach(), 0} {
						ls, g := localFactor(t, dc, cfg, reach)
						rows[k], sizes[k] = globalRows(dc.A, ls, g), len(ls.globals())
					}
					if sizes[0] < sizes[1] {
						smaller++
					}
					got, want := rows[0], rows[1]
					if !slices.Equal(got.RowPtr, want.RowPtr) || !slices.Equal(got.Col, want.Col) || !slices.Equal(got.Val, want.Val) {
						t.Fatalf("%s, reach %d (%d of %d local rows): G differs from the one of whole stripes", dc.name, cfg.reach(), sizes[0], sizes[1])
					}
				}
			}
			if total, _ := comm.AllreduceScalar(c, comm.Sum, int64(smaller)); total == 0 {
				t.Fatal("no rank left a row out: the test does not exercise the reach")
			}
		})
	}
}

// reachConfigs are the set-ups the reach tests compare: adaptive ones of
// the given numbers of steps, then static ones (set up in double precision)
// of the given powers K.
func reachConfigs(steps, powers []int) []Config {
	var configs []Config
	for _, n := range steps {
		cfg := DefaultConfig()
		cfg.Params.Steps = n
		configs = append(configs, cfg)
	}
	for _, k := range powers {
		cfg := DefaultConfig()
		cfg.Static, cfg.StaticParams.K, cfg.Setup = true, k, backend.Double
		configs = append(configs, cfg)
	}
	return configs
}

// TestDistributedFactor: G lower triangular with diag(G A G') = 1 on every
// rank count, and G' its exact transpose.
func TestDistributedFactor(t *testing.T) {
	for _, np := range []int{1, 2, 3, 4} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				for _, setup := range []backend.Precision{backend.Double, backend.Single} {
					cfg := DefaultConfig()
					cfg.Setup = setup
					ls, g := localFactor(t, dc, cfg, cfg.reach())
					rows := globalRows(dc.A, ls, g)
					tol := 1e-10
					if setup == backend.Single {
						tol = 1e-3
					}
					for i := 0; i < rows.Count(); i++ {
						gi := rows.First + int64(i)
						var q float64
						for a := rows.RowPtr[i]; a < rows.RowPtr[i+1]; a++ {
							if rows.Col[a] > gi {
								t.Fatalf("%s: G(%d,%d) is above the diagonal", dc.name, gi, rows.Col[a])
							}
							for b := rows.RowPtr[i]; b < rows.RowPtr[i+1]; b++ {
								q += rows.Val[a] * entry(dc.full, rows.Col[a], rows.Col[b]) * rows.Val[b]
							}
						}
						if math.Abs(q-1) > tol {
							t.Fatalf("%s %v set-up: (G A G')(%d,%d) = %.8g", dc.name, setup, gi, gi, q)
						}
					}
				}
				checkAdjoint(t, c, dc)
			}
		})
	}
}

// checkAdjoint verifies y'(G x) = (G'y)'x for the bound G and G'.
func checkAdjoint(t *testing.T, c *comm.Comm, dc distCase) {
	t.Helper()
	be := cpu.New(1)
	p, err := New(dc.A, be, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Free()
	n := dc.A.LocalRows()
	x, _ := ddmat.NewVector(c, be, n)
	y, _ := ddmat.NewVector(c, be, n)
	gx, _ := ddmat.NewVector(c, be, n)
	gty, _ := ddmat.NewVector(c, be, n)
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range xs {
		gi := float64(dc.A.First() + int64(i))
		xs[i], ys[i] = math.Sin(gi), math.Cos(3*gi)
	}
	x.Set(xs)
	y.Set(ys)
	if err := p.G.Apply(gx.V, x.V); err != nil {
		t.Fatal(err)
	}
	if err := p.Gt.Apply(gty.V, y.V); err != nil {
		t.Fatal(err)
	}
	a, _ := ddmat.Dot(y, gx)
	b, _ := ddmat.Dot(gty, x)
	if math.Abs(a-b) > 1e-10*math.Max(1, math.Abs(a)) {
		t.Fatalf("%s: y'(Gx) = %.15g but (G'y)'x = %.15g", dc.name, a, b)
	}
}

// TestPCGWithFSAI: PCG with aFSAI and static FSAI converges on every rank
// count with fewer iterations than Jacobi.
func TestPCGWithFSAI(t *testing.T) {
	for _, np := range []int{1, 2, 3, 4} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				jacobi := solveWith(t, c, dc, "jacobi")
				for _, prec := range []string{"afsai", "fsai"} {
					its := solveWith(t, c, dc, prec)
					if its >= jacobi {
						t.Fatalf("%s: %s took %d iterations, Jacobi %d", dc.name, prec, its, jacobi)
					}
				}
			}
		})
	}
}

func solveWith(t *testing.T, c *comm.Comm, dc distCase, prec string) int {
	t.Helper()
	be := cpu.New(1)
	var M krylov.Preconditioner
	var err error
	switch prec {
	case "jacobi":
		M, err = krylov.NewJacobi(dc.A, be)
	default:
		cfg := DefaultConfig()
		cfg.Static = prec == "fsai"
		M, err = New(dc.A, be, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer M.Free()
	return pcgIterations(t, c, dc, be, M, prec)
}

// pcgIterations solves A x = A 1 from zero with M on be to 1e-8, fails
// the test unless it converges, and returns the iterations.
func pcgIterations(t *testing.T, c *comm.Comm, dc distCase, be backend.Backend, M krylov.Preconditioner, name string) int {
	t.Helper()
	op, err := dc.A.Bind(be, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Free()
	n := dc.A.LocalRows()
	b, _ := ddmat.NewVector(c, be, n)
	x, _ := ddmat.NewVector(c, be, n)
	be.Fill(x.V, 1)
	if err := op.Apply(b.V, x.V); err != nil {
		t.Fatal(err)
	}
	be.Fill(x.V, 0)
	res, err := krylov.Solve(op, M, b, x, krylov.Options{Tol: 1e-8, MaxIt: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || res.RelRes > 1.01e-8 {
		t.Fatalf("%s with %s on %d ranks: %s after %d iterations, relres %g", dc.name, name, c.Size(), res.Reason, res.Iterations, res.RelRes)
	}
	if testing.Verbose() && c.Rank() == 0 {
		fmt.Printf("%s %s np=%d: %d iterations\n", dc.name, name, c.Size(), res.Iterations)
	}
	return res.Iterations
}

// TestReachLimit: a reach below the set-up's gathers fewer rows, and PCG
// with the G it gives converges (on these small matrices, whose stripes'
// starts are a large part of them, in more iterations than with the exact
// G, 24 -> 37 on 494_bus over 3 ranks: the limit is for large stripes); a
// reach at or above the set-up's gives the exact G, bit for bit, which the
// default collects with no more rows.
func TestReachLimit(t *testing.T) {
	for _, np := range []int{2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				be := cpu.New(1)
				var its []int
				var rows []int64
				var gs []*dsmat.Rows
				for _, reach := range []int{0, 2, DefaultParams().Steps + 5} {
					cfg := DefaultConfig()
					cfg.Reach = reach
					p, err := New(dc.A, be, cfg)
					if err != nil {
						t.Fatal(err)
					}
					its = append(its, pcgIterations(t, c, dc, be, p, fmt.Sprintf("afsai reach %d", reach)))
					local, err := comm.AllreduceScalar(c, comm.Sum, int64(p.Info.LocalRows))
					if err != nil {
						t.Fatal(err)
					}
					rows, gs = append(rows, local), append(gs, p.G.Matrix().Rows())
					p.Free()
				}
				if rows[1] >= rows[2] || rows[0] > rows[2] {
					t.Errorf("%s: local systems of %v rows for reach 0 (the exact set-up's, which collects what its rows need), 2 and beyond the set-up's", dc.name, rows)
				}
				if c.Rank() == 0 {
					t.Logf("%s: %d iterations with reach 2, %d with the exact G", dc.name, its[1], its[0])
				}
				if !slices.Equal(gs[2].Col, gs[0].Col) || !slices.Equal(gs[2].Val, gs[0].Val) {
					t.Errorf("%s: a reach beyond the set-up's changed G", dc.name)
				}
			}
		})
	}
}

// TestApplyStorage: after a single-precision set-up, Apply Double stores G
// and G' in float32 (their values are float32 numbers) and, on the CPU
// backend, applies them bit for bit as the float64 storage that Wide keeps;
// Apply Single is the same G.
func TestApplyStorage(t *testing.T) {
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			dc := distCases(t, c)[0]
			be := cpu.New(1)
			n := dc.A.LocalRows()
			r, _ := ddmat.NewVector(c, be, n)
			host := make([]float64, n)
			for i := range host {
				host[i] = math.Sin(float64(i) + float64(c.Rank()))
			}
			if err := r.Set(host); err != nil {
				t.Fatal(err)
			}
			var out [3][]float64
			for k, variant := range []struct {
				apply   backend.Precision
				wide    bool
				storage string
			}{{backend.Double, false, "single"}, {backend.Double, true, "double"}, {backend.Single, false, "single"}} {
				cfg := DefaultConfig()
				cfg.Apply, cfg.Wide = variant.apply, variant.wide
				M, err := New(dc.A, be, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if M.Info.ApplyStorage != variant.storage {
					t.Fatalf("apply %v wide %v: G stored %s, want %s", variant.apply, variant.wide, M.Info.ApplyStorage, variant.storage)
				}
				z, _ := ddmat.NewVector(c, be, n)
				if err := M.Apply(z, r); err != nil {
					t.Fatal(err)
				}
				out[k] = make([]float64, n)
				if err := z.Get(out[k]); err != nil {
					t.Fatal(err)
				}
				M.Free()
			}
			if !slices.Equal(out[0], out[1]) || !slices.Equal(out[0], out[2]) {
				t.Fatalf("%s on %d ranks: G'G r differs between the storages", dc.name, np)
			}
		})
	}
}

// TestCompleteMeansExact: where a rank's rows of G, set up on the rows
// within some reach, draw only on whole rows (localSystem.complete), they
// are the rows of whole stripes, bit for bit. Both answers must occur: a
// check that always says no would make every set-up collect everything.
func TestCompleteMeansExact(t *testing.T) {
	for _, np := range []int{2, 3, 4} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			counts := make([]int64, 2) // complete below the full reach, not complete
			for _, dc := range distCases(t, c) {
				for _, steps := range []int{6, 20} {
					cfg := DefaultConfig()
					cfg.Params.Steps = steps
					wls, wg := localFactor(t, dc, cfg, 0)
					want := globalRows(dc.A, wls, wg)
					for reach := 1; reach < cfg.reach(); reach++ {
						ls, g := localFactor(t, dc, cfg, reach)
						if !ls.complete(g) {
							counts[1]++
							continue
						}
						if len(ls.globals()) < len(wls.globals()) {
							counts[0]++
						}
						got := globalRows(dc.A, ls, g)
						if !slices.Equal(got.RowPtr, want.RowPtr) || !slices.Equal(got.Col, want.Col) || !slices.Equal(got.Val, want.Val) {
							t.Fatalf("%s, %d steps, reach %d: complete, but G differs from the one of whole stripes", dc.name, steps, reach)
						}
					}
				}
			}
			if err := comm.Allreduce(c, comm.Sum, counts); err != nil {
				t.Fatal(err)
			}
			if counts[0] == 0 || counts[1] == 0 {
				t.Fatalf("complete below the full reach %d times, not complete %d times: the test does not exercise both", counts[0], counts[1])
			}
		})
	}
}

// TestNewCollectsWhatRowsNeed: the default (exact) set-up, which collects
// near first and further where a row needs it, gives the G of the full
// reach; on the structural matrices some rows need more than the first
// reach, so some set-up takes more than one collection.
func TestNewCollectsWhatRowsNeed(t *testing.T) {
	for _, np := range []int{2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			further := 0
			for _, dc := range distCases(t, c) {
				cfg := DefaultConfig()
				lazy, err := New(dc.A, cpu.New(1), cfg)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Reach = cfg.reach()
				full, err := New(dc.A, cpu.New(1), cfg)
				if err != nil {
					t.Fatal(err)
				}
				got, want := lazy.G.Matrix().Rows(), full.G.Matrix().Rows()
				if !slices.Equal(got.RowPtr, want.RowPtr) || !slices.Equal(got.Col, want.Col) || !slices.Equal(got.Val, want.Val) {
					t.Errorf("%s: G of reach %d after %d collections differs from the one of reach %d", dc.name, lazy.Info.Reach, lazy.Info.Collections, cfg.Reach)
				}
				if lazy.Info.Collections > 1 {
					further++
				}
				lazy.Free()
				full.Free()
			}
			if np == 3 && further == 0 {
				t.Error("every set-up ended after its first collection: the further ones are not exercised")
			}
		})
	}
}

// TestLocalSystemEntriesLimit: a local system with more entries than its
// int32 row pointers count is refused with an error on every rank, none
// left waiting, in both set-up precisions (maxLocalEntries lowered to the
// stripe's own entries, so that any collected row passes it); a rank whose
// system fits gets the other ranks' failure.
func TestLocalSystemEntriesLimit(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		A := generated(t, c, "poisson7:7")
		own, err := comm.AllreduceScalar(c, comm.Max, int64(A.Diag.NNZ()))
		if err != nil {
			t.Fatal(err)
		}
		saved := maxLocalEntries
		maxLocalEntries = own
		defer func() { maxLocalEntries = saved }()
		for _, setup := range []backend.Precision{backend.Double, backend.Single} {
			cfg := DefaultConfig()
			cfg.Setup = setup
			p, err := New(A, cpu.New(1), cfg)
			if err == nil {
				p.Free()
				t.Fatalf("setup %v: a local system past %d entries was set up", setup, own)
			}
			if c.Rank() == 1 && !strings.Contains(err.Error(), "int32 row pointers") {
				t.Errorf("setup %v: rank 1, which collects rank 0's rows: %v", setup, err)
			}
			t.Logf("rank %d, setup %v: %v", c.Rank(), setup, err)
		}
	})
}
