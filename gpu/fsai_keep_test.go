package gpu

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
)

// TestAdaptiveFactorMatchesSetup: G kept on the device is AdaptiveSetup's G
// split at own, bit for bit: the rows' entries left of own on the host, the
// diagonal block (columns renumbered from own) on the device, and the
// device's transpose of the block is the host's. With own 0 (one rank), own
// n/3 (a rank holding rows of its neighbours first) and own n (no rows), in
// one batch and in batches of 97 rows (joined on the device).
func TestAdaptiveFactorMatchesSetup(t *testing.T) {
	b := openGPU(t)
	p := afsai.DefaultParams()
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		for _, own := range []int{0, n / 3, n} {
			for _, batch := range []int{0, 97} {
				t.Run(fmt.Sprintf("%s/own%d/batch%d", c.name, own, batch), func(t *testing.T) {
					rows := make([]int, n-own)
					for k := range rows {
						rows[k] = own + k
					}
					want, wst, _, err := b.AdaptiveSetup(c.a32, rows, p)
					if err != nil {
						t.Fatal(err)
					}
					f, st, kt, err := b.adaptiveFactor(c.a32, own, p, batch)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Diag.Free()
					defer f.DiagT.Free()
					if st != wst {
						t.Errorf("stats %+v, AdaptiveSetup's %+v", st, wst)
					}
					diag, _ := readBack(t, b, f.Diag)
					diagT, _ := readBack(t, b, f.DiagT)
					if k := joinedRowDiff(f.Left, diag, own, want); k >= 0 {
						lc, lv := f.Left.Row(k)
						dc, dv := diag.Row(k)
						wc, wv := want.Row(k)
						t.Fatalf("row %d: left %v %v, diagonal block %v %v; AdaptiveSetup's %v %v", k, lc, lv, dc, dv, wc, wv)
					}
					checkSameMatrix(t, "the device's transpose of the diagonal block", diagT, csr.Transpose(diag))
					t.Logf("%d rows, %d in the left arrays; assemble %.3f ms, transpose %.3f ms",
						len(rows), f.Left.NNZ(), 1e3*kt.Assemble, 1e3*kt.Transpose)
				})
			}
		}
	}
}

// joinedRowDiff returns the first row k whose entries in left, then in
// diag with own added to the columns, are not those of want's row k bit for
// bit; -1 when all agree.
func joinedRowDiff(left *csr.Matrix[float32], diag *csr.Matrix[float64], own int, want *csr.Matrix[float32]) int {
	if left.Rows != want.Rows || diag.Rows != want.Rows || diag.Cols != want.Rows {
		return 0
	}
	for k := range want.Rows {
		lc, lv := left.Row(k)
		dc, dv := diag.Row(k)
		wc, wv := want.Row(k)
		if len(lc)+len(dc) != len(wc) || !slices.Equal(lc, wc[:len(lc)]) {
			return k
		}
		for j, v := range lv {
			if math.Float32bits(v) != math.Float32bits(wv[j]) {
				return k
			}
		}
		for j, col := range dc {
			w := len(lc) + j
			if int(col)+own != int(wc[w]) || dv[j] != float64(wv[w]) {
				return k
			}
		}
	}
	return -1
}
