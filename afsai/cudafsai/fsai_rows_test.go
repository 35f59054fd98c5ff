package cudafsai

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/gpu"
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
						if k := leftRowDiff(f, want, n-own); k >= 0 || f.Left.Cols != want.Left.Cols {
							t.Errorf("the left entries of row %d differ (reached %t)", k, reached)
						}
						for _, m := range [][2]*gpu.Matrix{{f.Diag.(*gpu.Matrix), want.Diag.(*gpu.Matrix)}, {f.DiagT.(*gpu.Matrix), want.DiagT.(*gpu.Matrix)}} {
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

// leftRowDiff returns the first of the n own rows whose left entries in f
// and want differ, bit for bit; -1 when all agree.
func leftRowDiff(f, want afsai.DeviceFactor, n int) int {
	for i := range n {
		fc, fv := f.LeftRow(i)
		wc, wv := want.LeftRow(i)
		if !slices.Equal(fc, wc) || !slices.Equal(fv, wv) {
			return i
		}
	}
	return -1
}
