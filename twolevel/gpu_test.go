package twolevel_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/gputest"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestOnGPU: B on the CUDA backend passes TestRigidModesSolved's checks,
// before and after Refresh, and gives the CPU backend's B r, for a block of
// three columns, to 1e-11 of its largest entry, on one and two ranks (a GPU
// each, or sharing one). Skips without a GPU.
func TestOnGPU(t *testing.T) {
	if n, err := gpu.Available(); err != nil || n == 0 {
		t.Skip("no GPU")
	}
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			g := gputest.OpenRank(t, c)
			defer g.Close()
			h := cpu.New(1)
			defer h.Close()
			const spec = "elasticity:8:1e3:0.3"
			sg, sh := newSystem(t, c, g, spec), newSystem(t, c, h, spec)
			Bg, Bh := sg.newB(t, 3), sh.newB(t, 3)
			defer Bg.Free()
			defer Bh.Free()
			sg.check(t, c, Bg)
			if err := Bg.Refresh(sg.op); err != nil {
				t.Fatal(err)
			}
			sg.check(t, c, Bg)
			x := random(c, 3*len(sg.coords)/3)
			got, want := apply(t, c, g, Bg, x, 3), apply(t, c, h, Bh, x, 3)
			var worst, top float64
			for i := range want {
				worst, top = max(worst, math.Abs(got[i]-want[i])), max(top, math.Abs(want[i]))
			}
			d := sum(t, c, worst, top)
			if !(d[0] <= 1e-11*d[1]) {
				t.Errorf("GPU and CPU B r differ by %.3g, the largest entry is %.3g", d[0], d[1])
			}
			t.Logf("%d ranks: GPU and CPU B r differ by %.3g of %.3g", np, d[0], d[1])
		})
	}
}
