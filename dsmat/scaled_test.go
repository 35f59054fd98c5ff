package dsmat_test

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/problem"
)

// TestScaledSymmetric: S A S of a distributed matrix, with the scaling's
// entries at halo columns fetched from their owners, is bit for bit the
// matrix built from the scaled rows, on 1 to 3 ranks.
func TestScaledSymmetric(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			spec, err := problem.Parse("diffusion:5")
			if err != nil {
				t.Fatal(err)
			}
			s := func(i int64) float64 { return math.Pow(2, float64(i%7)-3) / (1 + float64(i)) }
			part := dsmat.NewPartition(spec.Rows(), c.Size())
			lo, hi := part.Range(c.Rank())
			rows, err := spec.Generate(lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			A, err := dsmat.New(c, part, rows)
			if err != nil {
				t.Fatal(err)
			}
			local := make([]float64, hi-lo)
			for i := range local {
				local[i] = s(lo + int64(i))
			}
			got, err := A.ScaledSymmetric(local)
			if err != nil {
				t.Fatal(err)
			}
			for i := range rows.Count() {
				for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
					rows.Val[k] = s(lo+int64(i)) * rows.Val[k] * s(rows.Col[k])
				}
			}
			want, err := dsmat.New(c, part, rows)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) {
				t.Error("S A S differs from the matrix of the scaled rows")
			}
		})
	}
}
