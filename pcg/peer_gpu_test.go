package pcg_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestPeerHalosOnGPU: on two and three ranks of one node (the middle one of
// three has two neighbours), the SpMV's halos go device to device when the
// ranks have GPUs of their own (Operator.PeerLinks counts every link; ranks
// that share a GPU exchange through the host), and rounds of products that
// reuse the buffers, with every schedule and blocks of 1 and 3 columns,
// equal the CPU backend's; with SetPeers(false) every link goes through the
// host and the products are the same. Skips without a GPU.
func TestPeerHalosOnGPU(t *testing.T) {
	gpus, err := gpu.Available()
	if err != nil || gpus == 0 {
		t.Skipf("no GPU: %v", err)
	}
	for _, np := range []int{2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := openRankGPU(t, c)
			defer be.Close()
			ref := setup(t, c, "diffusion:14", 1)
			for _, peers := range []bool{true, false} {
				be.SetPeers(peers)
				sys := setupOn(t, c, be, "diffusion:14", 1)
				device, host := sys.op.PeerLinks()
				if want := directLinks(sys.A, c.Rank(), gpus, peers); device != want {
					t.Fatalf("peers %v, %d GPUs: %d links device to device (want %d), %d through the host", peers, gpus, device, want, host)
				}
				for _, k := range []int{1, 3} {
					for _, s := range []dsmat.Schedule{dsmat.Overlap, dsmat.Sequential} {
						sys.op.SetSchedule(s)
						compareRounds(t, c, ref.op, sys.op, k, fmt.Sprintf("peers %v, %d columns, schedule %d", peers, k, s))
					}
				}
				sys.op.SetSchedule(dsmat.Overlap)
				t.Logf("rank %d of %d, peers %v: %d links device to device, %d through the host", c.Rank(), c.Size(), peers, device, host)
				sys.op.Free()
				sys.b.Free()
				sys.x.Free()
			}
		})
	}
}

// directLinks counts the links of rank me that go device to device: with
// peers on, those to ranks with another GPU of the node (ranks take GPU
// rank%gpus, openRankGPU), and none with them off.
func directLinks(A *dsmat.Matrix, me, gpus int, peers bool) int {
	if !peers {
		return 0
	}
	n := 0
	for _, b := range A.Off {
		if b.Rank%gpus != me%gpus {
			n++
		}
	}
	for _, s := range A.Sends {
		if s.Rank%gpus != me%gpus {
			n++
		}
	}
	return n
}

// compareRounds applies both operators to four different blocks of k
// columns in a row, without reading results in between, then compares
// every round's product.
func compareRounds(t *testing.T, c *comm.Comm, want, got *dsmat.Operator, k int, what string) {
	t.Helper()
	n := want.Matrix().LocalRows()
	const rounds = 4
	var results [2][][]float64
	for side, op := range []*dsmat.Operator{want, got} {
		var xs, ys []*ddmat.Dense
		for r := range rounds {
			x, err := ddmat.New(c, op.Backend(), n, k)
			if err != nil {
				t.Fatal(err)
			}
			y, err := ddmat.New(c, op.Backend(), n, k)
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]float64, n*k)
			first := want.Matrix().First()
			for i := range vals {
				vals[i] = math.Sin(float64((first+int64(i/k))*int64(k)+int64(i%k)) + float64(r))
			}
			if err := x.Set(vals); err != nil {
				t.Fatal(err)
			}
			if err := op.ApplyBlock(y.V, x.V, k); err != nil {
				t.Fatal(err)
			}
			xs, ys = append(xs, x), append(ys, y)
		}
		for r, y := range ys {
			out := make([]float64, n*k)
			if err := y.Get(out); err != nil {
				t.Fatal(err)
			}
			results[side] = append(results[side], out)
			y.Free()
			xs[r].Free()
		}
	}
	for r := range rounds {
		for i, w := range results[0][r] {
			if g := results[1][r][i]; math.Abs(g-w) > 1e-12*(1+math.Abs(w)) {
				t.Fatalf("%s: round %d, entry %d on rank %d: %.17g, CPU %.17g", what, r, i, c.Rank(), g, w)
			}
		}
	}
}
