package afsai

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/csr"
)

// BenchmarkAdaptive times the adaptive set-up with the default parameters
// on a 3D Laplacian of 30^3 rows, with a double and a single precision A.
func BenchmarkAdaptive(b *testing.B) {
	a := laplacian(30, 30, 30)
	rows := allRows(a.Rows)
	b.Run("float64", func(b *testing.B) { benchAdaptive(b, a, rows) })
	b.Run("float32", func(b *testing.B) { benchAdaptive(b, csr.Convert[float32](a), rows) })
}

func benchAdaptive[T csr.Real](b *testing.B, a *csr.Matrix[T], rows []int) {
	var stats Stats
	for b.Loop() {
		var err error
		if _, stats, err = Adaptive(a, rows, DefaultParams()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(stats.NNZ)/float64(len(rows)), "nnz/row")
}
