package cpu

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// TestSetValues: after SetValues, SpMV uses the new values (both
// precisions, from a separate slice), and a wrong count is refused.
func TestSetValues(t *testing.T) {
	b := New(2)
	for _, p := range []backend.Precision{backend.Double, backend.Single} {
		m := laplace1D(50)
		a, err := b.NewMatrix(m, nil, p)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float64, m.NNZ())
		for k := range vals {
			vals[k] = float64(k%7) - 2.5
		}
		if err := b.SetValues(a, vals); err != nil {
			t.Fatal(err)
		}
		x := make([]float64, m.Cols)
		for i := range x {
			x[i] = float64(i%5) + 1
		}
		ref := &csr.Matrix[float64]{Rows: m.Rows, Cols: m.Cols, RowPtr: m.RowPtr, ColIdx: m.ColIdx, Val: vals}
		want := make([]float64, m.Rows)
		csr.MulVec(ref, x, 0, want)
		y := make(Vector, m.Rows)
		backend.SpMV(b, y, a, Vector(x), 0)
		for i := range want {
			if y[i] != want[i] { // small integers and halves: exact in float32
				t.Fatalf("%v: y[%d] = %g, want %g", p, i, y[i], want[i])
			}
		}
		if err := b.SetValues(a, vals[1:]); err == nil {
			t.Fatalf("%v: SetValues accepted %d values for %d entries", p, len(vals)-1, len(vals))
		}
	}
}
