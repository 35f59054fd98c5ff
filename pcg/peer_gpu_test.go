package pcg_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/internal/gputest"
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
	onPeerRanks(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend, gpus int) {
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
					compareRounds(t, c, ref.op, sys.op, k, 1e-12, fmt.Sprintf("peers %v, %d columns, schedule %d", peers, k, s))
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

// onPeerRanks runs body on two and on three ranks of one node (the middle
// one of three has two neighbours), each with the GPU of its node-local
// rank, of gpus GPUs; it skips without a GPU.
func onPeerRanks(t *testing.T, body func(t *testing.T, c *comm.Comm, be *gpu.Backend, gpus int)) {
	gpus, err := gpu.Available()
	if err != nil || gpus == 0 {
		t.Skipf("no GPU: %v", err)
	}
	for _, np := range []int{2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := gputest.OpenRank(t, c)
			defer be.Close()
			body(t, c, be, gpus)
		})
	}
}

// TestPeerHalosExactOnGPU: on two and three ranks of one node, products
// whose halos go device to device (on the middle rank of three, both
// sends in one gather and the counters of both links in one batch each)
// equal bit for bit those of the same operator with its halos through the
// host (SetPeers(false)), rounds of them with no wait in between, blocks
// of 1 and 3 columns, both schedules. Skips without a GPU.
func TestPeerHalosExactOnGPU(t *testing.T) {
	onPeerRanks(t, func(t *testing.T, c *comm.Comm, be *gpu.Backend, gpus int) {
		columns := []int{1, 3}
		var syss [2]*system // through the host, device to device
		for i, peers := range []bool{false, true} {
			be.SetPeers(peers)
			syss[i] = setupOn(t, c, be, "diffusion:14", 1)
			// the halo buffers of every block width are made now,
			// under this SetPeers; rounds of the same products agree
			for _, k := range columns {
				compareRounds(t, c, syss[i].op, syss[i].op, k, 0, fmt.Sprintf("peers %v, %d columns, against itself", peers, k))
			}
		}
		device, host := syss[1].op.PeerLinks()
		if want := directLinks(syss[1].A, c.Rank(), gpus, true); device != want {
			t.Fatalf("%d GPUs: %d links device to device (want %d), %d through the host", gpus, device, want, host)
		}
		for _, k := range columns {
			for _, s := range []dsmat.Schedule{dsmat.Overlap, dsmat.Sequential} {
				for _, sys := range syss {
					sys.op.SetSchedule(s)
				}
				compareRounds(t, c, syss[0].op, syss[1].op, k, 0, fmt.Sprintf("%d columns, schedule %d", k, s))
			}
		}
		t.Logf("rank %d of %d: %d links device to device, %d through the host", c.Rank(), c.Size(), device, host)
		for _, sys := range syss {
			sys.op.Free()
			sys.b.Free()
			sys.x.Free()
		}
	})
}

// directLinks counts the links of rank me that go device to device: with
// peers on, those to ranks with another GPU of the node (ranks take GPU
// rank%gpus, gputest.OpenRank), and none with them off.
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
// every round's product: entries may differ by tol relative to 1 + |want|
// (0: bit for bit).
func compareRounds(t *testing.T, c *comm.Comm, want, got *dsmat.Operator, k int, tol float64, what string) {
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
			if g := results[1][r][i]; math.Abs(g-w) > tol*(1+math.Abs(w)) || math.IsNaN(g) != math.IsNaN(w) {
				t.Fatalf("%s: round %d, entry %d on rank %d: %.17g, want %.17g", what, r, i, c.Rank(), g, w)
			}
		}
	}
}
