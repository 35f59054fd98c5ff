package dsmat_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// lowerTriangle keeps the entries on and below the diagonal, scaled by their
// position so that a transposed entry cannot pass for another one.
func lowerTriangle(full *dsmat.Rows) *dsmat.Rows {
	l := &dsmat.Rows{N: full.N, RowPtr: []int64{0}}
	for i := 0; i < full.Count(); i++ {
		for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
			if c := full.Col[k]; c <= int64(i) {
				l.Col = append(l.Col, c)
				l.Val = append(l.Val, full.Val[k]*float64(1+3*int64(i)+c))
			}
		}
		l.RowPtr = append(l.RowPtr, int64(len(l.Col)))
	}
	return l
}

// TestTranspose: each rank's stripe of the distributed transpose of a lower
// triangular matrix equals that stripe of the serial transpose, rows sorted,
// on even and uneven partitions.
func TestTranspose(t *testing.T) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			low := lowerTriangle(generate(t, "poisson27:5")) // 125 rows
			parts := []dsmat.Partition{dsmat.NewPartition(low.N, np)}
			if np == 3 {
				parts = append(parts, dsmat.Partition{Offsets: []int64{0, 1, 1, 125}}, dsmat.Partition{Offsets: []int64{0, 100, 120, 125}})
			}
			// the serial transpose, as a whole stripe
			want := &dsmat.Rows{N: low.N, RowPtr: []int64{0}}
			for j := int64(0); j < low.N; j++ {
				for i := 0; i < low.Count(); i++ {
					for k := low.RowPtr[i]; k < low.RowPtr[i+1]; k++ {
						if low.Col[k] == j {
							want.Col = append(want.Col, int64(i))
							want.Val = append(want.Val, low.Val[k])
						}
					}
				}
				want.RowPtr = append(want.RowPtr, int64(len(want.Col)))
			}
			for _, part := range parts {
				lo, hi := part.Range(c.Rank())
				got, err := dsmat.Transpose(c, part, stripe(low, lo, hi))
				if err != nil {
					t.Fatal(err)
				}
				ref := stripe(want, lo, hi)
				if err := got.Check(); err != nil {
					t.Fatal(err)
				}
				if got.First != lo || got.Count() != ref.Count() || got.NNZ() != ref.NNZ() {
					t.Fatalf("partition %v: stripe [%d,+%d) with %d entries, want [%d,+%d) with %d",
						part.Offsets, got.First, got.Count(), got.NNZ(), lo, ref.Count(), ref.NNZ())
				}
				for k := range ref.Col {
					if got.Col[k] != ref.Col[k] || got.Val[k] != ref.Val[k] || got.RowPtr[got.Count()] != ref.RowPtr[ref.Count()] {
						t.Fatalf("partition %v: entry %d is (%d, %g), want (%d, %g)", part.Offsets, k, got.Col[k], got.Val[k], ref.Col[k], ref.Val[k])
					}
				}
			}
		})
	}
}
