package pcg_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// TestSingleReductionOnGPU: single-reduction CG on the CUDA backend (its
// fused update, the sums gathered on the device and read once per
// iteration) with Jacobi and with aFSAI (a general M: M.Apply, then the
// dots added to the sums), on one column and on a block of three, takes
// the CPU backend's iterations within 1 and reaches its solution, on 1, 2
// and 3 ranks; and PCG's iterations within 3. Skips without a GPU.
func TestSingleReductionOnGPU(t *testing.T) {
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		opt := pcg.Options{Tol: 1e-8, MaxIt: 5000}
		for _, spec := range []string{"poisson7:24", "poisson27:12"} {
			for _, prec := range []string{"jacobi", "afsai"} {
				for _, k := range []int{1, 3} {
					what := spec + " " + prec
					want := solveSystem(t, setupOn(t, c, cpu.New(1), spec, 1), prec, k, pcg.NewSingleReductionWorkspace, opt)
					got := solveSystem(t, setupOn(t, c, be, spec, 1), prec, k, pcg.NewSingleReductionWorkspace, opt)
					compareSolves(t, what+" GPU against CPU", k, want, got, 1)
					standard := solveSystem(t, setupOn(t, c, be, spec, 1), prec, k, pcg.NewWorkspace, opt)
					compareSolves(t, what+" GPU against PCG", k, standard, got, 3)
					t.Logf("%s, %d columns, %d ranks: %d iterations on the GPU, %d on the CPU, PCG %d", what, k, c.Size(),
						got.res[0].Iterations, want.res[0].Iterations, standard.res[0].Iterations)
				}
			}
		}
	})
}
