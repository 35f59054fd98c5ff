package gpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
)

// TestAdaptiveRowsJoin: G's rows computed in two parts (the even and the
// odd own rows) and joined are AdaptiveFactor's, bit for bit: each part's
// block, read back with its row map, holds AdaptiveFactor's rows, its
// left entries are those rows' left entries, the joined block and its
// transpose are AdaptiveFactor's, and the statistics add up to its. Touches
// agrees with the host's reading of the parts. With own 0 (one rank) and
// n/3 (rows received).
func TestAdaptiveRowsJoin(t *testing.T) {
	b := openGPU(t)
	p := afsai.DefaultParams()
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		for _, own := range []int{0, n / 3} {
			t.Run(fmt.Sprintf("%s/own%d", c.name, own), func(t *testing.T) {
				s := splitAt(c.a, own)
				want, wst, _, err := b.AdaptiveFactor(s, p)
				if err != nil {
					t.Fatal(err)
				}
				defer want.Diag.Free()
				defer want.DiagT.Free()
				wdiag, _ := readBack(t, b, want.Diag)
				var parts []afsai.RowsPart
				var st afsai.Stats
				for parity := range 2 {
					var rows []int32
					for r := int32(parity); r < int32(n-own); r += 2 {
						rows = append(rows, r)
					}
					part, pst, _, err := b.AdaptiveRows(s, rows, p)
					if err != nil {
						t.Fatal(err)
					}
					defer part.Free()
					parts = append(parts, part)
					st.NNZ, st.FallbackRows = st.NNZ+pst.NNZ, st.FallbackRows+pst.FallbackRows
					st.MaxPattern = max(st.MaxPattern, pst.MaxPattern)
					checkPart(t, b, part, wdiag, want.Left)
				}
				if st != wst {
					t.Errorf("stats of the parts %+v, AdaptiveFactor's %+v", st, wst)
				}
				diag, diagT, err := b.JoinRows(n-own, parts)
				if err != nil {
					t.Fatal(err)
				}
				defer diag.Free()
				defer diagT.Free()
				got, _ := readBack(t, b, diag)
				gotT, _ := readBack(t, b, diagT)
				checkSameMatrix(t, "the joined block", got, wdiag)
				wantT, _ := readBack(t, b, want.DiagT)
				checkSameMatrix(t, "its transpose", gotT, wantT)
				for _, marked := range [][]int32{nil, parts[1].Rows, {int32(n-own) - 1}, {0}} {
					reached, err := b.Touches(parts[0], marked)
					if err != nil {
						t.Fatal(err)
					}
					if w := touches(parts[0].Rows, wdiag, marked); reached != w {
						t.Errorf("Touches of %d marked rows: %t, the host's %t", len(marked), reached, w)
					}
				}
			})
		}
	}
}

// checkPart checks a part against AdaptiveFactor's block and left rows.
func checkPart(t *testing.T, b *Backend, part afsai.RowsPart, wdiag *csr.Matrix[float64], wleft *csr.Matrix[float32]) {
	t.Helper()
	block, rowMap := readBack(t, b, part.Block)
	if len(part.Rows) > 0 && !slices.Equal(rowMap, part.Rows) {
		t.Fatalf("the block's row map is not the part's rows")
	}
	for k, r := range part.Rows {
		gc, gv := block.Row(k)
		wc, wv := wdiag.Row(int(r))
		lc, lv := part.Left.Row(k)
		wlc, wlv := wleft.Row(int(r))
		if !slices.Equal(gc, wc) || !slices.Equal(gv, wv) || !slices.Equal(lc, wlc) || !slices.Equal(lv, wlv) {
			t.Fatalf("own row %d: block %v %v left %v %v; AdaptiveFactor's %v %v, %v %v", r, gc, gv, lc, lv, wc, wv, wlc, wlv)
		}
	}
}

// touches is Touches on the host: whether a row of rows, or a column of
// its row of diag, is marked.
func touches(rows []int32, diag *csr.Matrix[float64], marked []int32) bool {
	isMarked := func(c int32) bool { return slices.Contains(marked, c) }
	for _, r := range rows {
		cols, _ := diag.Row(int(r))
		if isMarked(r) || slices.ContainsFunc(cols, isMarked) {
			return true
		}
	}
	return false
}

