package gpu

import (
	"math/rand/v2"

	"github.com/fsai-dist/fsai-dist/csr"
)

// randomBlock returns a rows x cols block (the shape of an off-diagonal
// halo block) where about a third of the rows are empty and the others hold
// up to maxLen entries.
func randomBlock(rng *rand.Rand, rows, cols, maxLen int) *csr.Matrix[float64] {
	var e []csr.Entry[float64]
	for i := 0; i < rows; i++ {
		if rng.IntN(3) == 0 {
			continue
		}
		for k := rng.IntN(maxLen) + 1; k > 0; k-- {
			e = append(e, csr.Entry[float64]{Row: int32(i), Col: int32(rng.IntN(cols)), Val: rng.NormFloat64()})
		}
	}
	return csr.FromEntries(rows, cols, e)
}

func randomVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}
