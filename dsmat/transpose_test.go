package dsmat_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// scaled keeps the entries of full on and below the diagonal (all of them
// when lower is false), scaled by their position so that a transposed entry
// cannot pass for another one.
func scaled(full *dsmat.Rows, lower bool) *dsmat.Rows {
	l := &dsmat.Rows{N: full.N, RowPtr: []int64{0}}
	for i := 0; i < full.Count(); i++ {
		for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
			if c := full.Col[k]; !lower || c <= int64(i) {
				l.Col = append(l.Col, c)
				l.Val = append(l.Val, full.Val[k]*float64(1+3*int64(i)+c))
			}
		}
		l.RowPtr = append(l.RowPtr, int64(len(l.Col)))
	}
	return l
}

// transposed returns the transpose of a whole matrix held as one stripe,
// serially.
func transposed(full *dsmat.Rows) *dsmat.Rows {
	t := &dsmat.Rows{N: full.N, RowPtr: []int64{0}}
	for j := int64(0); j < full.N; j++ {
		for i := 0; i < full.Count(); i++ {
			for k := full.RowPtr[i]; k < full.RowPtr[i+1]; k++ {
				if full.Col[k] == j {
					t.Col = append(t.Col, int64(i))
					t.Val = append(t.Val, full.Val[k])
				}
			}
		}
		t.RowPtr = append(t.RowPtr, int64(len(t.Col)))
	}
	return t
}

// partitions are the even partition of n rows over np ranks and, on 2 and 3
// ranks, uneven ones with empty stripes.
func partitions(n int64, np int) []dsmat.Partition {
	parts := []dsmat.Partition{dsmat.NewPartition(n, np)}
	switch np {
	case 2:
		parts = append(parts, dsmat.Partition{Offsets: []int64{0, n, n}})
	case 3:
		parts = append(parts, dsmat.Partition{Offsets: []int64{0, 1, 1, n}}, dsmat.Partition{Offsets: []int64{0, n - 25, n - 5, n}})
	}
	return parts
}

// TestTranspose: each rank's stripe of the distributed transpose of a lower
// triangular matrix equals that stripe of the serial transpose, rows sorted,
// on even and uneven partitions.
func TestTranspose(t *testing.T) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			low := scaled(generate(t, "poisson27:5"), true) // 125 rows
			want := transposed(low)
			for _, part := range partitions(low.N, np) {
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
