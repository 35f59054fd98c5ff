package pcg_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// TestNearlySingularHonestOnGPU is TestNearlySingularHonest on the CUDA
// backend: every preconditioner converges on the true residual or stops
// with max_iterations naming the attainable accuracy. Skips without a GPU.
func TestNearlySingularHonestOnGPU(t *testing.T) {
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		for _, name := range precNames {
			nearlySingularCase(t, c, be, name)
		}
	})
}

// TestScaledOnGPU: on the CUDA backend, b = A*1 times 1e-200 and 1e200
// (norms whose squares under- and overflow) converge in the iterations of
// b = A*1, and poisson7:6 times 1e300 converges: the robust norms and the
// scaled right-hand side run over the backend's kernels. Skips without a
// GPU.
func TestScaledOnGPU(t *testing.T) {
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		base := setupOn(t, c, be, "poisson7:6", 1)
		want, err := pcg.Solve(base.op, pcg.None{}, base.b, base.x, pcg.Options{Tol: 1e-8, MaxIt: 500})
		if err != nil || !want.Converged {
			t.Fatalf("b = A*1: %s, %v", want.Reason, err)
		}
		for _, f := range []float64{1e-200, 1e200} {
			sys := setupOn(t, c, be, "poisson7:6", 1)
			ddmat.Axpby(sys.b, f, base.b, 0)
			res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 500})
			if err != nil {
				t.Fatal(err)
			}
			if !checkHonest(t, "scaled b", res, 1e-8) || res.Iterations != want.Iterations {
				t.Errorf("b times %g: %s after %d iterations, want converged after %d", f, res.Reason, res.Iterations, want.Iterations)
			}
		}
		sys := setupOn(t, c, be, "poisson7:6", 1e300)
		res, err := pcg.Solve(sys.op, pcg.None{}, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 500})
		if err != nil {
			t.Fatal(err)
		}
		if !checkHonest(t, "A times 1e300", res, 1e-8) {
			t.Errorf("A times 1e300: %s after %d iterations, want converged", res.Reason, res.Iterations)
		}
	})
}

// TestScaledSetupOnGPU is TestScaledSetup on the CUDA backend: the
// device's FSAI set-up (adaptive and static) receives the symmetrically
// scaled matrix of D A D and of a 1e308 diagonal, and the solves converge.
// Skips without a GPU.
func TestScaledSetupOnGPU(t *testing.T) {
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		scaledSetupCases(t, c, be)
	})
}
