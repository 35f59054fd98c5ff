package twolevel

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/csr"
)

// TestSlabTranspose: the slab rows summed by the sum are the transpose,
// entry by entry, for a tall block of several slabs with columns that some
// slabs lack.
func TestSlabTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cols = 3*slabRows + 100, 40
	var entries []csr.Entry[float64]
	for i := 0; i < rows; i++ {
		for k := 0; k < 4; k++ {
			c := (i/slabRows*7 + rng.IntN(cols/2)) % cols // each slab reaches its own half of the columns
			entries = append(entries, csr.Entry[float64]{Row: int32(i), Col: int32(c), Val: rng.Float64() - 0.5})
		}
	}
	m := csr.FromEntries(rows, cols, entries)
	slabs, sum := slabTranspose(m)
	want := csr.Transpose(m)
	if sum.Rows != cols || sum.Cols != slabs.Rows || slabs.Cols != rows || slabs.NNZ() != m.NNZ() {
		t.Fatalf("slabs %d x %d (%d entries), sum %d x %d, for a %d x %d block of %d entries",
			slabs.Rows, slabs.Cols, slabs.NNZ(), sum.Rows, sum.Cols, rows, cols, m.NNZ())
	}
	if slabs.Rows <= cols {
		t.Fatalf("%d slab rows for %d columns: the slabs do not split the columns", slabs.Rows, cols)
	}
	for c := 0; c < cols; c++ {
		var idx []int32
		var val []float64
		rs, _ := sum.Row(c)
		for _, r := range rs {
			i, v := slabs.Row(int(r))
			idx, val = append(idx, i...), append(val, v...)
		}
		wi, wv := want.Row(c)
		if !slices.Equal(idx, wi) || !slices.Equal(val, wv) {
			t.Fatalf("column %d: slab rows give rows %v, the transpose %v", c, idx, wi)
		}
	}
}
