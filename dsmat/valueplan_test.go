package dsmat_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestValuePlan: every destination position gets the value of the entry
// it names, from any rank (itself included, some entries twice, some
// never), and again after the values change; wrong lengths are refused.
func TestValuePlan(t *testing.T) {
	for np := 1; np <= 3; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			n := 5 + 3*c.Rank() // uneven source counts
			first, err := dsmat.FirstEntry(c, n)
			if err != nil {
				t.Fatal(err)
			}
			total, err := comm.AllreduceScalar(c, comm.Sum, int64(n))
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for id := total - 1; id >= 0; id -= int64(1 + c.Rank()) {
				want = append(want, id, id/2) // descending, and repeats
			}
			plan, err := dsmat.NewValuePlan(c, n, want)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 2 {
				value := func(id int64) float64 { return float64(id)*1.5 + float64(round) }
				src := make([]float64, n)
				for k := range src {
					src[k] = value(first + int64(k))
				}
				dst := make([]float64, len(want))
				if err := plan.Move(dst, src); err != nil {
					t.Fatal(err)
				}
				for j, id := range want {
					if dst[j] != value(id) {
						t.Fatalf("round %d: position %d got %g, want entry %d's %g", round, j, dst[j], id, value(id))
					}
				}
			}
			if err := plan.Move(make([]float64, len(want)+1), make([]float64, n)); err == nil {
				t.Error("Move accepted a destination of the wrong length")
			}
		})
	}
}
