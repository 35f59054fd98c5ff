package spai

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// TestOwnRows: the own rows of the local system are A's stripe in global
// columns (A.Rows) on 1 and 3 ranks; on one rank, whose stripe is its
// diagonal block alone, their values are the block's, not a copy.
func TestOwnRows(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			A := testmatrices.Generated(t, c, "convdiff:6:100")
			got, want := ownRows(A), A.Rows()
			if got.N != want.N || got.First != want.First || !slices.Equal(got.RowPtr, want.RowPtr) ||
				!slices.Equal(got.Col, want.Col) || !slices.Equal(got.Val, want.Val) {
				t.Errorf("rank %d of %d: own rows differ from A.Rows", c.Rank(), np)
			}
			if shared := &got.Val[0] == &A.Diag.Val[0]; shared != (np == 1) {
				t.Errorf("rank %d of %d: values shared with the diagonal block: %t", c.Rank(), np, shared)
			}
		})
	}
}

// TestEdgeAsks: the asks for the rows one hop away, made from A's
// off-diagonal blocks, are the kept entries' columns outside the stripe
// that a scan of every own row finds, grouped by owner, ascending and once
// each, on 3 ranks, for a tau that drops entries and one that keeps all.
func TestEdgeAsks(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		A := testmatrices.Generated(t, c, "convdiff:6:100")
		own := ownRows(A)
		max, err := checkRows(own)
		if err != nil {
			t.Fatal(err)
		}
		for _, tau := range []float64{0.5, 1} {
			want := make([][]int64, c.Size())
			for i := range own.Count() {
				g := own.First + int64(i)
				for e := own.RowPtr[i]; e < own.RowPtr[i+1]; e++ {
					if q := A.Part.Owner(own.Col[e]); q != c.Rank() && kept(g, own.Col[e], own.Val[e], max[i], tau) {
						want[q] = append(want[q], own.Col[e])
					}
				}
			}
			got := edgeAsks(A, max, tau)
			asked := 0
			for q := range want {
				slices.Sort(want[q])
				want[q] = slices.Compact(want[q])
				asked += len(want[q])
				if !slices.Equal(got[q], want[q]) {
					t.Errorf("rank %d, tau %g: asks of rank %d %v, want %v", c.Rank(), tau, q, got[q], want[q])
				}
			}
			if asked == 0 && tau == 1 { // every entry kept: each stripe couples to its neighbours
				t.Errorf("rank %d, tau %g: asks no row", c.Rank(), tau)
			}
		}
	})
}

// TestOwnForeign: the own rows' columns outside the stripe, which collect
// takes from A's halo, are those a scan of the rows finds, on 3 ranks; one
// rank has none.
func TestOwnForeign(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			A := testmatrices.Generated(t, c, "convdiff:6:100")
			var st Stages
			l, err := collect(A, DefaultParams(), &st, false)
			if err != nil {
				t.Fatal(err)
			}
			want := foreignOf(ownRows(A))
			if !slices.Equal(l.OwnForeign, want) || len(want) == 0 != (np == 1) {
				t.Errorf("rank %d of %d: own rows' foreign columns %v, want %v", c.Rank(), np, l.OwnForeign, want)
			}
		})
	}
}

// TestCollectBlocksOnly: a local system collected on A's blocks alone (for
// a device that reads the diagonal block where it lies) holds the same
// rows, largest magnitudes and foreign columns as one with the own rows
// copied, without that copy until Own makes it, which is then A's stripe;
// its ForeignEntries, read off the off-diagonal blocks, are those a scan
// of the own rows finds, and its own entries are counted; on 1, 2 and 3
// ranks, at k 1 and 2. A non-finite value is refused with the message of
// the copied rows' check.
func TestCollectBlocksOnly(t *testing.T) {
	for _, np := range []int{1, 2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			A := testmatrices.Generated(t, c, "convdiff:6:100")
			for _, p := range []Params{DefaultParams(), {Tau: 1, K: 2}} {
				var st, stBlocks Stages
				want, err := collect(A, p, &st, false)
				if err != nil {
					t.Fatal(err)
				}
				got, err := collect(A, p, &stBlocks, true)
				if err != nil {
					t.Fatal(err)
				}
				if got.own != nil || stBlocks.OwnS != 0 || got.Diag != A.Diag {
					t.Errorf("rank %d of %d: the blocks-only system copied its own rows (own_s %g)", c.Rank(), np, stBlocks.OwnS)
				}
				if !slices.Equal(got.OwnMax, want.OwnMax) || !slices.Equal(got.HeldRows, want.HeldRows) ||
					!slices.Equal(got.HeldPtr, want.HeldPtr) || !slices.Equal(got.HeldCol, want.HeldCol) ||
					!slices.Equal(got.HeldVal, want.HeldVal) || !slices.Equal(got.HeldMax, want.HeldMax) ||
					!slices.Equal(got.OwnForeign, want.OwnForeign) || got.First != want.First || got.N != want.N ||
					got.Count() != want.Count() {
					t.Errorf("rank %d of %d, %+v: the blocks-only system differs", c.Rank(), np, p)
				}
				if got.OwnNNZ() != want.OwnNNZ() || got.OwnNNZ() != A.Rows().NNZ() {
					t.Errorf("rank %d of %d: %d own entries, want %d", c.Rank(), np, got.OwnNNZ(), want.OwnNNZ())
				}
				gr, gp, gc, gv := got.ForeignEntries()
				wr, wp, wc, wv := want.ForeignEntries()
				if !slices.Equal(gr, wr) || !slices.Equal(gp, wp) || !slices.Equal(gc, wc) || !slices.Equal(gv, wv) ||
					len(wr) == 0 != (np == 1) {
					t.Errorf("rank %d of %d: foreign entries of rows %v, want %v", c.Rank(), np, gr, wr)
				}
				if o, w := got.Own(), want.Own(); !slices.Equal(o.RowPtr, w.RowPtr) || !slices.Equal(o.Col, w.Col) ||
					!slices.Equal(o.Val, w.Val) || !(got.ownS > 0) {
					t.Errorf("rank %d of %d: the own rows made on use differ from A's stripe", c.Rank(), np)
				}
			}
			bad := &A.Diag.Val[len(A.Diag.Val)-1] // in an edge row where there is one
			if len(A.Off) > 0 {
				bad = &A.Off[0].A.Val[0]
			}
			*bad = math.NaN()
			var st Stages
			_, want := collect(A, DefaultParams(), &st, false)
			_, got := collect(A, DefaultParams(), &st, true)
			if want == nil || got == nil || got.Error() != want.Error() {
				t.Errorf("rank %d of %d: a NaN refused with %v, want %v", c.Rank(), np, got, want)
			}
		})
	}
}

// TestStagesWithinTotals: the parts of gather_s and upload_s that Info
// reports are measured (positive) and each within its total (the slowest
// rank's of each), on 1 and 2 ranks; the host's computation reports no
// device stages.
func TestStagesWithinTotals(t *testing.T) {
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := cpu.New(1)
			defer be.Close()
			pre, err := New(testmatrices.Generated(t, c, "convdiff:8:100"), be, Config{Params: DefaultParams()})
			if err != nil {
				t.Fatal(err)
			}
			defer pre.Free()
			in := pre.Info
			if !(in.OwnS > 0 && in.CheckS > 0 && in.OwnS <= in.GatherS && in.CheckS <= in.GatherS) {
				t.Errorf("%d ranks: own_s %g, check_s %g against gather_s %g", np, in.OwnS, in.CheckS, in.GatherS)
			}
			if !(in.SplitS > 0 && in.BindS > 0 && in.SplitS <= in.UploadS && in.BindS <= in.UploadS) {
				t.Errorf("%d ranks: split_s %g, bind_s %g against upload_s %g", np, in.SplitS, in.BindS, in.UploadS)
			}
			if dev := in.PatternS + in.SystemS + in.ToDeviceS + in.CountS + in.KernelS + in.FromDeviceS + in.AssembleS; dev != 0 {
				t.Errorf("%d ranks: the host's set-up reports %g s of device stages", np, dev)
			}
		})
	}
}

// TestServeRows: the rows a rank serves are its rows of A in global
// columns (A.Rows), whole, in the order asked, whether the local system
// holds them copied or reads A's blocks; a row it does not own is refused
// by name and served empty; on 1 and 3 ranks.
func TestServeRows(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			A := testmatrices.Generated(t, c, "convdiff:6:100")
			rows := A.Rows()
			var got []int64
			for i := rows.Count() - 1; i >= 0; i -= 2 { // descending, every other row
				got = append(got, rows.First+int64(i))
			}
			foreign := (rows.First + int64(rows.Count())) % rows.N
			if np == 1 {
				foreign = rows.N
			}
			got = append(got, foreign)
			for _, blocksOnly := range []bool{false, true} {
				var st Stages
				l, err := collect(A, DefaultParams(), &st, blocksOnly)
				if err != nil {
					t.Fatal(err)
				}
				lens, cols, vals, bad := l.serveRows(got, []int{len(got)})
				if bad == nil || !strings.Contains(bad.Error(), fmt.Sprintf("row %d,", foreign)) {
					t.Errorf("rank %d of %d: asked for row %d, error %v", c.Rank(), np, foreign, bad)
				}
				at := int64(0)
				for k, g := range got[:len(got)-1] {
					i := g - rows.First
					a, b := rows.RowPtr[i], rows.RowPtr[i+1]
					if lens[k] != b-a || !slices.Equal(cols[at:at+lens[k]], rows.Col[a:b]) || !slices.Equal(vals[at:at+lens[k]], rows.Val[a:b]) {
						t.Fatalf("rank %d of %d, blocks only %t: row %d served differs from A's", c.Rank(), np, blocksOnly, g)
					}
					at += lens[k]
				}
				if lens[len(got)-1] != 0 || at != int64(len(cols)) {
					t.Errorf("rank %d of %d: %d entries served for %d", c.Rank(), np, len(cols), at)
				}
			}
		})
	}
}
