package cudafsai

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/csr"
)

// TestStaticFactorMatchesCPU: static FSAI's G from the device is
// afsai.Static's G of the joined system, bit for bit, with the same
// statistics (entries dropped by the post-filter included): its entries
// left of own on the host, the diagonal block on the device, and the
// block's transpose there is the host's. For the default parameters, the
// first power without a filter, and a third power with a coarser filter;
// with own 0 (one rank), own n/3 and own n (no rows), in one batch and in
// batches of 97 rows. Where the CPU's longest pattern is beyond the
// device's search, the device must refuse it.
func TestStaticFactorMatchesCPU(t *testing.T) {
	b := openGPU(t)
	params := []afsai.StaticParams{afsai.DefaultConfig().StaticParams, {Tau: 0, K: 1}, {Tau: 0.05, K: 3, Delta: 0.05}}
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		for _, p := range params {
			for _, own := range []int{0, n / 3, n} {
				for _, batch := range []int{0, 97} {
					t.Run(fmt.Sprintf("%s/tau%g-K%d-delta%g/own%d/batch%d", c.name, p.Tau, p.K, p.Delta, own, batch), func(t *testing.T) {
						rows := make([]int, n-own)
						for k := range rows {
							rows[k] = own + k
						}
						want, wst, err := afsai.Static(c.a32, rows, p)
						if err != nil {
							t.Fatal(err)
						}
						f, st, kt, err := b.staticFactor(splitAt(c.a, own), p, fsaiJob{maxBatch: batch})
						if errors.Is(err, afsai.ErrDeviceUnsupported) && wst.MaxPattern >= staticPatternCap {
							t.Logf("left to the CPU, whose longest pattern is %d: %v", wst.MaxPattern, err)
							return
						}
						if err != nil {
							t.Fatal(err)
						}
						defer freeDeviceFactor(f)
						checkKeptFactor(t, b, "Static", f, st, own, want, wst)
						t.Logf("%d rows, %d entries, %d dropped; pattern %.3f ms, filter %.3f ms", len(rows), st.NNZ, st.Dropped,
							1e3*kt.Pattern, 1e3*kt.Filter)
					})
				}
			}
		}
	}
}

// TestStaticFactorLongPatterns: a row whose pattern holds more columns
// than the device's search holds is left to the CPU (ErrDeviceUnsupported),
// and a pattern just within it is computed.
func TestStaticFactorLongPatterns(t *testing.T) {
	b := openGPU(t)
	for _, c := range []struct {
		n           int
		unsupported bool
	}{{staticPatternCap, false}, {staticPatternCap + 1, true}} {
		a := denseSPD(c.n)
		f, st, _, err := b.StaticFactor(splitAt(a, 0), afsai.StaticParams{K: 1})
		if err == nil {
			freeDeviceFactor(f)
		}
		if got := errors.Is(err, afsai.ErrDeviceUnsupported); got != c.unsupported || (err != nil && !got) {
			t.Errorf("dense %d rows: error %v, want unsupported %v", c.n, err, c.unsupported)
		}
		if err == nil && st.MaxPattern != c.n-1 {
			t.Errorf("dense %d rows: longest pattern %d, want %d", c.n, st.MaxPattern, c.n-1)
		}
	}
}

// denseSPD returns the dense SPD matrix of n rows with n on the diagonal
// and 1 elsewhere, in CSR.
func denseSPD(n int) *csr.Matrix[float64] {
	a := &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	for i := range n {
		for j := range n {
			v := 1.0
			if i == j {
				v = float64(n)
			}
			a.ColIdx, a.Val = append(a.ColIdx, int32(j)), append(a.Val, v)
		}
		a.RowPtr[i+1] = int32(len(a.ColIdx))
	}
	return a
}
