package gpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
)

// TestStartRowsFinish: G set up in two parts, the interior own rows
// started from the diagonal block alone and the others finished from the
// local system in the same set-up, is AdaptiveFactor's, bit for bit (the
// left entries, the diagonal block and its transpose, the statistics),
// when Finish is told the border's own rows: it joins the parts where no
// started row reached one, and computes all rows again where one did.
// Marking every row takes the second path wherever rows were started. The
// rows StartRows leaves to Finish are InteriorRows' near rows: the odd rows
// for the odd rows as seeds and 0 hops (the parts interleave), those
// within 2 hops of every seventh row, and all rows (none started) for all
// as seeds. With own 0 (one rank: the diagonal block is the local system)
// and n/3.
func TestStartRowsFinish(t *testing.T) {
	b := openGPU(t)
	p := afsai.DefaultParams()
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		for _, own := range []int{0, n / 3} {
			for _, all := range []bool{false, true} {
				for _, start := range []struct{ every, hops int }{{2, 0}, {7, 2}, {1, 0}} {
					t.Run(fmt.Sprintf("%s/own%d/markall%t/hops%d", c.name, own, all, start.hops), func(t *testing.T) {
						s := splitAt(c.a, own)
						want, wst, _, err := b.AdaptiveFactor(s, p)
						if err != nil {
							t.Fatal(err)
						}
						defer freeDeviceFactor(want)
						var seeds, marked []int32
						for r := int32(0); r < int32(n-own); r++ {
							if int(r)%start.every == 1%start.every {
								seeds = append(seeds, r)
							}
							if all || (int(r)+own < s.Border.Rows && s.Border.RowPtr[int(r)+own+1] > s.Border.RowPtr[int(r)+own]) {
								marked = append(marked, r)
							}
						}
						interior, wantNear := afsai.InteriorRows(s.Diag, seeds, start.hops)
						diag := afsai.Split{Border: &csr.Matrix[float32]{Cols: n - own, RowPtr: make([]int32, 1)}, Diag: s.Diag}
						run, near, st, _, err := b.StartRows(diag, seeds, start.hops, p)
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(near, wantNear) {
							t.Fatalf("StartRows left %d rows to Finish, InteriorRows %d", len(near), len(wantNear))
						}
						f, st2, _, reached, err := run.Finish(s, near, marked)
						if err != nil {
							t.Fatal(err)
						}
						defer freeDeviceFactor(f)
						if all && len(interior) > 0 && !reached {
							t.Errorf("every row marked, and no started row reached one")
						}
						if !reached {
							st.NNZ, st.FallbackRows = st.NNZ+st2.NNZ, st.FallbackRows+st2.FallbackRows
							st.MaxPattern = max(st.MaxPattern, st2.MaxPattern)
						} else {
							st = st2
						}
						if st != wst {
							t.Errorf("stats %+v (reached %t), AdaptiveFactor's %+v", st, reached, wst)
						}
						if !slices.Equal(f.Left.RowPtr, want.Left.RowPtr) || !slices.Equal(f.Left.ColIdx, want.Left.ColIdx) ||
							!slices.Equal(f.Left.Val, want.Left.Val) || f.Left.Cols != want.Left.Cols {
							t.Errorf("the left entries differ (reached %t)", reached)
						}
						for _, m := range [][2]*Matrix{{f.Diag.(*Matrix), want.Diag.(*Matrix)}, {f.DiagT.(*Matrix), want.DiagT.(*Matrix)}} {
							got, _ := readBack(t, b, m[0])
							w, _ := readBack(t, b, m[1])
							checkSameMatrix(t, fmt.Sprintf("a block (reached %t)", reached), got, w)
						}
					})
				}
			}
		}
	}
}

// TestSpreadRows: a part's left entries spread over all own rows keep each
// row's entries at its place and leave the other rows empty (no GPU).
func TestSpreadRows(t *testing.T) {
	for _, rows := range [][]int32{nil, {0}, {6}, {1, 4, 5}, {0, 1, 2, 3, 4, 5, 6}} {
		const n = 7
		left := &csr.Matrix[float32]{Rows: len(rows), Cols: 9, RowPtr: make([]int32, len(rows)+1)}
		for k := range rows {
			for e := 0; e <= k%3; e++ { // rows of 1, 2 and 3 entries
				left.ColIdx = append(left.ColIdx, int32(e))
				left.Val = append(left.Val, float32(10*k+e))
			}
			left.RowPtr[k+1] = int32(len(left.ColIdx))
		}
		got := spreadRows(left, rows, n)
		want := make([]int32, n+1)
		for k, r := range rows {
			want[r+1] = left.RowPtr[k+1] - left.RowPtr[k]
		}
		for i := 0; i < n; i++ {
			want[i+1] += want[i]
		}
		if got.Rows != n || !slices.Equal(got.RowPtr, want) || !slices.Equal(got.ColIdx, left.ColIdx) {
			t.Errorf("rows %v: %d rows, row pointers %v, want %d and %v", rows, got.Rows, got.RowPtr, n, want)
		}
	}
}
