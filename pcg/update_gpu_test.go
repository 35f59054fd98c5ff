package pcg_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// TestUpdateOnGPU: the values-only update of an aFSAI preconditioner whose
// set-up left G on the GPU stores its rows in the device blocks (no host
// copies are left) and gives the G and G' that the host path gives on the
// same GPU (a set-up with Wide, whose update brings the rows to the host
// and uploads them), bit for bit, and PCG's iterations; twice with new
// values, on 1, 2 and 3 ranks. Skips without a GPU.
func TestUpdateOnGPU(t *testing.T) {
	onRankGPUs(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend) {
		sys := setupOn(t, c, be, "diffusion:16", 1)
		placed, host := onDevice(be, afsai.DefaultConfig()), onDevice(be, afsai.DefaultConfig())
		host.Wide = true
		var ps []*afsai.Preconditioner
		var us []*afsai.Updater
		for _, cfg := range []afsai.Config{placed, host} {
			p, err := afsai.New(sys.A, be, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Free()
			u := afsai.NewUpdater(p, sys.A, cfg)
			defer u.Free()
			ps, us = append(ps, p), append(us, u)
		}
		lo, hi := sys.A.Part.Range(c.Rank())
		for round := range 2 {
			rows := scaledRows(sys.full, lo, hi, func(i int64) float64 { return 1.25 + 0.5*math.Sin(float64(i+int64(7*round))) })
			if err := sys.A.SetValues(rows); err != nil {
				t.Fatal(err)
			}
			if err := sys.op.Refresh(); err != nil {
				t.Fatal(err)
			}
			for _, u := range us {
				if err := u.Update(); err != nil {
					t.Fatal(err)
				}
			}
			tm := us[0].Times
			if hostCopies := ps[0].G.Matrix().Diag != nil || ps[0].Gt.Matrix().Diag != nil; !tm.OnDevice || hostCopies {
				t.Fatalf("round %d: rank %d: rows on the device %t, host copies of the device blocks %t",
					round, c.Rank(), tm.OnDevice, hostCopies)
			}
			for k, name := range []string{"G", "G'"} {
				got, want := []*dsmat.Operator{ps[0].G, ps[0].Gt}[k], []*dsmat.Operator{ps[1].G, ps[1].Gt}[k]
				d, _, err := be.ReadMatrix(got.DiagonalBlock())
				if err != nil {
					t.Fatal(err)
				}
				w := want.Matrix().Diag
				if !slices.Equal(d.RowPtr, w.RowPtr) || !slices.Equal(d.ColIdx, w.ColIdx) || !slices.Equal(d.Val, w.Val) {
					t.Fatalf("round %d: rank %d: %s's diagonal block differs from the host path's", round, c.Rank(), name)
				}
				for b := range want.Matrix().Off {
					if !slices.Equal(got.Matrix().Off[b].A.Val, want.Matrix().Off[b].A.Val) {
						t.Fatalf("round %d: rank %d: %s's off-diagonal block %d differs from the host path's", round, c.Rank(), name, b)
					}
				}
			}
			var its []int
			for _, p := range ps {
				be.Fill(sys.x.V, 0)
				res, err := pcg.Solve(sys.op, p, sys.b, sys.x, pcg.Options{Tol: 1e-8, MaxIt: 1000})
				if err != nil || !res.Converged {
					t.Fatalf("round %d: %v, %s", round, err, res.Reason)
				}
				its = append(its, res.Iterations)
			}
			if d := its[0] - its[1]; d < -1 || d > 1 {
				t.Errorf("round %d: %d iterations, the host path's %d", round, its[0], its[1])
			}
			t.Logf("round %d on %d ranks: rank %d: %d rows broke down; %d iterations, the host path's %d",
				round, c.Size(), c.Rank(), tm.FallbackRows, its[0], its[1])
		}
	})
}

// scaledRows returns rows [lo,hi) of D A D, D = diag(d(i)), for a whole
// matrix A held as one stripe: symmetric positive definite when A is.
func scaledRows(full *dsmat.Rows, lo, hi int64, d func(int64) float64) *dsmat.Rows {
	a, b := full.RowPtr[lo], full.RowPtr[hi]
	r := &dsmat.Rows{N: full.N, First: lo, Col: full.Col[a:b], Val: make([]float64, b-a)}
	for i := lo; i < hi; i++ {
		for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
			r.Val[k-a] = d(i) * full.Val[k] * d(full.Col[k])
		}
		r.RowPtr = append(r.RowPtr, full.RowPtr[i]-a)
	}
	r.RowPtr = append(r.RowPtr, b-a)
	return r
}
