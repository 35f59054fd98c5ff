package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// TestSetValues: after SetValues a matrix multiplies with its new values
// (rounded to its precision), and a wrong count or a foreign matrix is
// refused without spoiling the backend.
func TestSetValues(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for name, m := range testMatrices(t) {
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			a, err := b.NewMatrix(m, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			next := &csr.Matrix[float64]{Rows: m.Rows, Cols: m.Cols, RowPtr: m.RowPtr, ColIdx: m.ColIdx,
				Val: randomVec(rng, m.NNZ())}
			if err := b.SetValues(a, next.Val); err != nil {
				t.Fatal(err)
			}
			ref := next
			if p == backend.Single {
				ref = csr.Convert[float64](csr.Convert[float32](next))
			}
			x := randomVec(rng, m.Cols)
			want := make([]float64, m.Rows)
			csr.MulVec(ref, x, 0, want)
			yv := newVec(t, b, make([]float64, m.Rows))
			backend.SpMV(b, yv, a, newVec(t, b, x), 0)
			got := download(t, b, yv)
			for i := range want {
				var scale float64 // sum |a_ij x_j|: the size of rounding errors
				for k := ref.RowPtr[i]; k < ref.RowPtr[i+1]; k++ {
					scale += math.Abs(ref.Val[k] * x[ref.ColIdx[k]])
				}
				if !near(got[i], want[i], scale+1e-300, 1e-13) {
					t.Fatalf("%s %v: y[%d] = %v, want %v", name, p, i, got[i], want[i])
				}
			}
			if err := b.SetValues(a, append(next.Val, 1)); err == nil {
				t.Fatalf("%s %v: SetValues accepted %d values for %d entries", name, p, m.NNZ()+1, m.NNZ())
			}
			a.Free()
		}
	}
	if err := b.SetValues(nil, nil); err == nil {
		t.Fatal("SetValues accepted a nil matrix")
	}
	if err := b.Err(); err != nil {
		t.Fatalf("a refused SetValues spoiled the backend: %v", err)
	}
}
