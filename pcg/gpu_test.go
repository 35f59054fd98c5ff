package pcg_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// TestPCGOnGPU: PCG-Jacobi on the CUDA backend (one GPU per rank, or ranks
// sharing one) takes the iteration count of the CPU backend within 1 and
// reaches the same solution, on one and two ranks. Skips without a GPU.
func TestPCGOnGPU(t *testing.T) {
	if n, err := gpu.Available(); err != nil || n == 0 {
		t.Skipf("no GPU: %v", err)
	}
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			nodeRank, _, err := c.NodeRank()
			if err != nil {
				t.Fatal(err)
			}
			dev, err := gpu.DeviceFor(nodeRank, true)
			if err != nil {
				t.Fatal(err)
			}
			be, err := gpu.Open(dev)
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
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
				t.Logf("%s on %d ranks: %d iterations on the GPU, %d on the CPU", spec, np, got.res.Iterations, want.res.Iterations)
			}
		})
	}
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
