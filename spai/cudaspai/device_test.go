package cudaspai

import (
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu/gputest"
	"github.com/fsai-dist/fsai-dist/problem"
	"github.com/fsai-dist/fsai-dist/spai"
)

// openGPU opens device 0 for a test and returns the SPAI row computation
// on it, or skips the test without a GPU (gputest.Open).
func openGPU(t *testing.T) *Device { return New(gputest.Open(t)) }

// TestRowsGPU: the rows of M solved on the GPU have the host's patterns
// and the host's values (spai.Rows) within 1e-12 of each row's largest
// entry (the kernel rounds as the host does, so they should agree bit for
// bit; the count of rows that do not is logged), on convdiff problems and
// patterns of up to 27 columns, in one batch and in many (a batch bound of
// 64 kB, halved until it fits).
func TestRowsGPU(t *testing.T) {
	d := openGPU(t)
	for _, spec := range []string{"convdiff:10:100", "convdiff:12:1000", "convdiff:8:0"} {
		s, err := problem.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Generate(0, s.Rows())
		if err != nil {
			t.Fatal(err)
		}
		l, err := spai.NewLocal(a)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []spai.Params{spai.DefaultParams(), {Tau: 1, K: 2}} {
			want, wst, err := spai.Rows(l, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, limit := range []int64{0, 64 << 10} {
				d.batchBytes = limit
				got, gst, err := d.Rows(l, p)
				if err != nil {
					t.Fatal(err)
				}
				if gst.MaxBlockRows != wst.MaxBlockRows || gst.MaxBlockCols != wst.MaxBlockCols || gst.Batches != d.Batches {
					t.Errorf("%s %+v: largest block %+v on the GPU, %+v on the host", spec, p, gst, wst)
				}
				worst, unequal := compareRows(t, got, want)
				t.Logf("%s tau %g k %d, %d batches: largest difference %.2g of a row's largest entry, %d rows not bit for bit the host's",
					spec, p.Tau, p.K, d.Batches, worst, unequal)
				if limit > 0 && d.Batches < 2 {
					t.Errorf("%s %+v: %d batches under a bound of %d bytes", spec, p, d.Batches, limit)
				}
			}
		}
	}
}

// compareRows fails t where got's patterns differ from want's or a value
// differs by more than 1e-12 of its row's largest entry; it returns the
// largest such difference and the number of rows not equal bit for bit.
func compareRows(t *testing.T, got, want *dsmat.Rows) (worst float64, unequal int) {
	t.Helper()
	if got.Count() != want.Count() {
		t.Fatalf("%d rows on the GPU, %d on the host", got.Count(), want.Count())
	}
	for i := range want.Count() {
		gc, gv := got.Col[got.RowPtr[i]:got.RowPtr[i+1]], got.Val[got.RowPtr[i]:got.RowPtr[i+1]]
		wc, wv := want.Col[want.RowPtr[i]:want.RowPtr[i+1]], want.Val[want.RowPtr[i]:want.RowPtr[i+1]]
		if !slices.Equal(gc, wc) {
			t.Fatalf("row %d: pattern %v on the GPU, %v on the host", i+1, gc, wc)
		}
		if !slices.Equal(gv, wv) {
			unequal++
		}
		scale := 0.0
		for _, v := range wv {
			scale = math.Max(scale, math.Abs(v))
		}
		for k := range wv {
			d := math.Abs(gv[k]-wv[k]) / scale
			worst = math.Max(worst, d)
			if !(d <= 1e-12) {
				t.Errorf("row %d, column %d: %.17g on the GPU, %.17g on the host", i+1, wc[k]+1, gv[k], wv[k])
			}
		}
	}
	return worst, unequal
}
