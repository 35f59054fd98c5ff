package afsai

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestEarlyFactor: the stripe of G set up early, its interior rows from
// A's diagonal block alone, is the one AdaptiveFactor computes from the
// collected local system, bit for bit, with the same statistics: with the
// interior rows of the set-up (interiorHops), and with every row but the
// border's own rows early (hops 0), whose patterns then reach those rows,
// and which all ranks but the first compute again; both paths are taken.
func TestEarlyFactor(t *testing.T) {
	for _, np := range []int{2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			again := 0 // cases computed again on this rank
			for _, dc := range distCases(t, c) {
				ls, err := gatherLocal(dc.A, 2, 0, backend.Single, true)
				if err != nil {
					t.Fatal(err)
				}
				for _, hops := range []int{interiorHops, 0} {
					name := fmt.Sprintf("%s/hops%d", dc.name, hops)
					dev := rowsHostDevice{&hostDevice{Backend: cpu.New(1), made: map[backend.Matrix]*csr.Matrix[float64]{}}}
					p := DefaultParams()
					want, wst, _, err := dev.AdaptiveFactor(*ls.split, p)
					if err != nil {
						t.Fatal(err)
					}
					got, st, _, rows, err := earlyFactor(dc.A, dev, nil, p, hops, func() (Split, error) { return *ls.split, nil })
					if err != nil {
						t.Fatal(err)
					}
					if st != wst {
						t.Errorf("%s: stats %+v, AdaptiveFactor's %+v", name, st, wst)
					}
					gotLeft := DeviceFactor{Left: csr.Convert[float32](got.rows), LeftRows: got.leftRows}
					for i := range dc.A.LocalRows() {
						gc, gv := gotLeft.LeftRow(i)
						wc, wv := want.LeftRow(i)
						if !slices.Equal(gc, wc) || !slices.Equal(gv, wv) || got.rows.Cols != want.Left.Cols {
							t.Errorf("%s: row %d's entries in other ranks' columns differ", name, i)
							break
						}
					}
					for _, m := range [][2]backend.Matrix{{got.diag, want.Diag}, {got.diagT, want.DiagT}} {
						g, w := dev.made[m[0]], dev.made[m[1]]
						if !slices.Equal(g.RowPtr, w.RowPtr) || !slices.Equal(g.ColIdx, w.ColIdx) || !slices.Equal(g.Val, w.Val) {
							t.Errorf("%s: a diagonal block differs", name)
						}
					}
					if rows == 0 {
						again++
					}
				}
			}
			if c.Rank() > 0 && again == 0 {
				t.Errorf("rank %d computed no case again", c.Rank())
			}
		})
	}
}

// TestInteriorRows: on a path of 10 rows, the rows farther than hops from
// the seeds, and the others.
func TestInteriorRows(t *testing.T) {
	const n = 10
	path := &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	for i := range n {
		for j := max(i-1, 0); j <= min(i+1, n-1); j++ {
			path.ColIdx = append(path.ColIdx, int32(j))
			path.Val = append(path.Val, 1)
		}
		path.RowPtr[i+1] = int32(len(path.ColIdx))
	}
	for _, c := range []struct {
		seeds          []int32
		hops           int
		interior, near []int32
	}{
		{nil, 3, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []int32{}},
		{[]int32{0}, 0, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}, []int32{0}},
		{[]int32{0}, 2, []int32{3, 4, 5, 6, 7, 8, 9}, []int32{0, 1, 2}},
		{[]int32{4, 9}, 1, []int32{0, 1, 2, 6, 7}, []int32{3, 4, 5, 8, 9}},
		{[]int32{5}, 200, []int32{}, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
	} {
		interior, near := InteriorRows(path, c.seeds, c.hops)
		if !slices.Equal(interior, c.interior) || !slices.Equal(near, c.near) {
			t.Errorf("seeds %v, %d hops: interior %v near %v, want %v and %v", c.seeds, c.hops, interior, near, c.interior, c.near)
		}
	}
}

// TestEarlyDiagonalError: a diagonal entry that is not positive in an own
// row, met early on A's diagonal block alone, is named by its global row
// counting from 1 (localSystem.named), with the interior rows early and
// with every row but the border's own rows early.
func TestEarlyDiagonalError(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		A := generated(t, c, "poisson7:7")
		k := A.LocalRows() / 2
		for j := A.Diag.RowPtr[k]; j < A.Diag.RowPtr[k+1]; j++ {
			if A.Diag.ColIdx[j] == int32(k) {
				A.Diag.Val[j] = -3
			}
		}
		ls, err := gatherLocal(A, 2, 0, backend.Single, true)
		if err != nil {
			t.Fatal(err)
		}
		g := A.First() + int64(k) + 1
		want := fmt.Sprintf("afsai: diagonal entry A(%d,%d) = -3 is not positive and finite", g, g)
		for _, hops := range []int{interiorHops, 0} {
			dev := rowsHostDevice{&hostDevice{Backend: cpu.New(1), made: map[backend.Matrix]*csr.Matrix[float64]{}}}
			_, _, _, _, err := earlyFactor(A, dev, nil, DefaultParams(), hops, func() (Split, error) { return *ls.split, nil })
			if err == nil || !strings.Contains(ls.named(err).Error(), want) {
				t.Errorf("hops %d: error %v, want %q", hops, err, want)
			}
		}
	})
}
