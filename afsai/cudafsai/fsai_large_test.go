package cudafsai

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// TestAdaptiveSetupPastInt32Midpoints: the set-up's binary searches of A's
// rows (fsai_entry) stay right where the row pointers pass 2^30, so that
// the sum of two of them no longer fits an int. The matrix holds 1.2G
// entries (about 10 GB on the device and as much on the host); the last
// rows, whose searches run past 2^30, are compared bit for bit with
// afsai.Adaptive. Before the midpoint was taken as lo + (hi-lo)/2, these
// rows never finished (elasticity:188 on one GPU). Skipped with -short or
// when the device has too little memory free.
func TestAdaptiveSetupPastInt32Midpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("a matrix of 1.2G entries")
	}
	b := openGPU(t)
	const n, w = 14_800_000, 40
	if free, err := b.FreeMemory(); err != nil || free < 16<<30 {
		t.Skipf("%d bytes free on the device, %v: the test needs 16 GiB", free, err)
	}
	a := bandSPD(n, w)
	if last := a.RowPtr[n-1]; int64(last)*2 <= 1<<31-1 {
		t.Fatalf("the last row starts at %d: the searches do not pass 2^30", last)
	}
	rows := make([]int, 2000)
	for k := range rows {
		rows[k] = n - len(rows) + k
	}
	p := afsai.DefaultParams()
	g, st, _, err := b.AdaptiveSetup(a, rows, p)
	if err != nil {
		t.Fatal(err)
	}
	want, wst, err := afsai.Adaptive(a, rows, p)
	if err != nil {
		t.Fatal(err)
	}
	if r := compareFactors(g, want); r.sameBits != len(rows) {
		k := r.firstDiff
		gc, gv := g.Row(k)
		wc, wv := want.Row(k)
		t.Fatalf("%d of %d rows differ from the CPU's; first, row %d:\nGPU %v %v\nCPU %v %v",
			len(rows)-r.sameBits, len(rows), rows[k], gc, gv, wc, wv)
	}
	if st != wst {
		t.Errorf("stats %+v, CPU %+v", st, wst)
	}
}

// bandSPD returns the symmetric matrix of n rows with entries a_ij =
// -1/(1+|i-j|) - ((i+j) mod 7)/700 for 0 < |i-j| <= w, and a diagonal one
// above the sum of a row's off-diagonal magnitudes: strictly diagonally
// dominant, so SPD. Built on all cores.
func bandSPD(n, w int) *csr.Matrix[float32] {
	a := &csr.Matrix[float32]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	width := func(i int) int { return min(i, w) + 1 + min(n-1-i, w) }
	parallel.Scan(a.RowPtr, func(i int) int32 { return int32(width(i)) })
	nnz := int(a.RowPtr[n])
	a.ColIdx, a.Val = make([]int32, nnz), make([]float32, nnz)
	parallel.For(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			at, diag, sum := int(a.RowPtr[i]), 0, float32(0)
			for j := max(i-w, 0); j <= min(i+w, n-1); j++ {
				a.ColIdx[at] = int32(j)
				if j == i {
					diag = at
				} else {
					d := max(i-j, j-i)
					a.Val[at] = -1/float32(1+d) - float32((i+j)%7)/700
					sum -= a.Val[at]
				}
				at++
			}
			a.Val[diag] = sum + 1
		}
	})
	return a
}
