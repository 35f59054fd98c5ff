package pcg_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/afsai/cudafsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/gputest"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// TestPCGOnGPU: PCG-Jacobi on the CUDA backend (one GPU per rank, or ranks
// sharing one) takes the iteration count of the CPU backend within 1 and
// reaches the same solution, on one and two ranks. Skips without a GPU.
func TestPCGOnGPU(t *testing.T) {
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		for _, spec := range []string{"poisson7:40", "diffusion:24", "poisson27:20"} {
			want := solveJacobi(t, c, setup(t, c, spec, 1))
			got := solveJacobi(t, c, setupOn(t, c, be, spec, 1))
			if d := got.res.Iterations - want.res.Iterations; d < -1 || d > 1 || !got.res.Converged {
				t.Fatalf("%s: GPU %d iterations (%s), CPU %d", spec, got.res.Iterations, got.res.Reason, want.res.Iterations)
			}
			for i := range want.x {
				if math.Abs(got.x[i]-want.x[i]) > 1e-6 {
					t.Fatalf("%s: x[%d] GPU %.12g, CPU %.12g", spec, i, got.x[i], want.x[i])
				}
			}
			t.Logf("%s on %d ranks: %d iterations on the GPU, %d on the CPU", spec, c.Size(), got.res.Iterations, want.res.Iterations)
		}
	})
}

type solved struct {
	res pcg.Result
	x   []float64
}

func solveJacobi(t *testing.T, c *comm.Comm, sys *system) solved {
	t.Helper()
	M, err := pcg.NewJacobi(sys.A, sys.op.Backend())
	if err != nil {
		t.Fatal(err)
	}
	defer M.Free()
	res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 5000})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, sys.x.Rows)
	if err := sys.x.Get(x); err != nil {
		t.Fatal(err)
	}
	return solved{res, x}
}

// TestSolveBlockOnGPU: four right-hand sides solved together on the CUDA
// backend (block kernels, block halo exchange) give each column the CPU
// backend's iterations within 1 and its solution, with Jacobi and aFSAI, on
// one and two ranks. Skips without a GPU.
func TestSolveBlockOnGPU(t *testing.T) {
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		const k = 4
		for _, prec := range []string{"jacobi", "afsai"} {
			var want, got []solved
			for _, sys := range []*system{setup(t, c, "diffusion:16", 1), setupOn(t, c, be, "diffusion:16", 1)} {
				cols := solveBlock(t, c, sys, prec, blockRHS(t, sys, k, 2, 3))
				if want == nil {
					want = cols
				} else {
					got = cols
				}
			}
			for col := range k {
				w, g := want[col], got[col]
				if d := g.res.Iterations - w.res.Iterations; d < -1 || d > 1 || !g.res.Converged {
					t.Fatalf("%s column %d: GPU %d iterations (%s), CPU %d", prec, col, g.res.Iterations, g.res.Reason, w.res.Iterations)
				}
				for i := range w.x {
					if math.Abs(g.x[i]-w.x[i]) > 1e-6*(1+math.Abs(w.x[i])) {
						t.Fatalf("%s column %d: x[%d] GPU %.12g, CPU %.12g", prec, col, i, g.x[i], w.x[i])
					}
				}
				t.Logf("%s column %d on %d ranks: %d iterations on the GPU, %d on the CPU", prec, col, c.Size(), g.res.Iterations, w.res.Iterations)
			}
		}
	})
}

// onDevice returns cfg with the FSAI set-up on the GPU of be when be is a
// CUDA backend, as package solver supplies it.
func onDevice(be backend.Backend, cfg afsai.Config) afsai.Config {
	if g, ok := be.(*gpu.Backend); ok {
		cfg.Device = cudafsai.New(g)
	}
	return cfg
}

// solveBlock solves the k-column block rhs on sys with prec and returns
// each column's result and solution.
func solveBlock(t *testing.T, c *comm.Comm, sys *system, prec string, rhs []float64) []solved {
	t.Helper()
	be, n := sys.op.Backend(), sys.A.LocalRows()
	k := len(rhs) / n
	var M pcg.Preconditioner
	var err error
	if prec == "jacobi" {
		M, err = pcg.NewJacobi(sys.A, be)
	} else {
		M, err = afsai.NewFor(sys.op, onDevice(be, afsai.DefaultConfig())) // on a GPU: reads the bound diagonal block
	}
	if err != nil {
		t.Fatal(err)
	}
	defer M.Free()
	b, _ := ddmat.New(c, be, n, k)
	x, _ := ddmat.New(c, be, n, k)
	defer b.Free()
	defer x.Free()
	if err := b.Set(rhs); err != nil {
		t.Fatal(err)
	}
	res, err := pcg.SolveBlock(sys.op, M, b, x, pcg.Options{Tol: 1e-8, MaxIt: 5000})
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float64, n*k)
	if err := x.Get(xs); err != nil {
		t.Fatal(err)
	}
	out := make([]solved, k)
	for col := range out {
		out[col] = solved{res[col], column(xs, k, col)}
	}
	return out
}

// onRankGPUs runs body on one and on two ranks, each with the GPU of its
// node-local rank (shared when ranks outnumber GPUs); it skips without a
// GPU.
func onRankGPUs(t *testing.T, body func(t *testing.T, c *comm.Comm, be *gpu.Backend)) {
	if n, err := gpu.Available(); err != nil || n == 0 {
		t.Skipf("no GPU: %v", err)
	}
	for _, np := range []int{1, 2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := gputest.OpenRank(t, c)
			defer be.Close()
			body(t, c, be)
		})
	}
}

// TestStaticFSAIOnGPU: static FSAI set up on the GPU (setup_device cuda,
// G kept there) has the CPU backend's G: the same entries and entries
// dropped by its post-filter; and PCG with it takes the CPU backend's
// iterations within 1 and reaches the same solution, on 1, 2 and 3 ranks.
// Skips without a GPU.
func TestStaticFSAIOnGPU(t *testing.T) {
	cfg := afsai.DefaultConfig()
	cfg.Static = true
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		for _, spec := range []string{"diffusion:20", "poisson27:14"} {
			var runs []solved
			var infos []afsai.Info
			for _, sys := range []*system{setup(t, c, spec, 1), setupOn(t, c, be, spec, 1)} {
				M, err := afsai.NewFor(sys.op, onDevice(sys.op.Backend(), cfg))
				if err != nil {
					t.Fatal(err)
				}
				res, err := pcg.Solve(sys.op, M, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 5000})
				M.Free()
				if err != nil {
					t.Fatal(err)
				}
				x := make([]float64, sys.x.Rows)
				if err := sys.x.Get(x); err != nil {
					t.Fatal(err)
				}
				runs, infos = append(runs, solved{res, x}), append(infos, M.Info)
			}
			want, got := runs[0], runs[1]
			if infos[1].SetupDevice != "cuda" || infos[0].SetupDevice != "cpu" {
				t.Fatalf("%s: set-up on %q with the GPU backend, %q with the CPU's", spec, infos[1].SetupDevice, infos[0].SetupDevice)
			}
			if g, w := infos[1], infos[0]; g.NNZ != w.NNZ || g.Dropped != w.Dropped || g.MaxPattern != w.MaxPattern || g.Dropped == 0 {
				t.Fatalf("%s: G of %d entries, %d dropped, longest pattern %d on the GPU; %d, %d, %d on the CPU (and some dropped)", spec,
					g.NNZ, g.Dropped, g.MaxPattern, w.NNZ, w.Dropped, w.MaxPattern)
			}
			if d := got.res.Iterations - want.res.Iterations; d < -1 || d > 1 || !got.res.Converged {
				t.Fatalf("%s: GPU %d iterations (%s), CPU %d", spec, got.res.Iterations, got.res.Reason, want.res.Iterations)
			}
			for i := range want.x {
				if math.Abs(got.x[i]-want.x[i]) > 1e-6*(1+math.Abs(want.x[i])) {
					t.Fatalf("%s: x[%d] GPU %.12g, CPU %.12g", spec, i, got.x[i], want.x[i])
				}
			}
			t.Logf("%s on %d ranks: static FSAI of %d entries (%d dropped), %d iterations on the GPU, %d on the CPU", spec, c.Size(),
				infos[1].NNZ, infos[1].Dropped, got.res.Iterations, want.res.Iterations)
		}
	})
}
