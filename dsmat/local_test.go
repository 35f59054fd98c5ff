package dsmat_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// localStripe holds rows in a local column numbering: the columns the
// stripe uses, its own rows and every fifth global index (columns no entry
// uses), ascending.
func localStripe(rows *dsmat.Rows) (*csr.Matrix[float64], []int64) {
	global := slices.Clone(rows.Col)
	for i := range int64(rows.Count()) {
		global = append(global, rows.First+i)
	}
	for g := int64(0); g < rows.N; g += 5 {
		global = append(global, g)
	}
	slices.Sort(global)
	global = slices.Compact(global)
	a := &csr.Matrix[float64]{Rows: rows.Count(), Cols: len(global), RowPtr: make([]int32, rows.Count()+1),
		ColIdx: make([]int32, len(rows.Col)), Val: slices.Clone(rows.Val)}
	for i, p := range rows.RowPtr {
		a.RowPtr[i] = int32(p)
	}
	for k, g := range rows.Col {
		j, _ := slices.BinarySearch(global, g)
		a.ColIdx[k] = int32(j)
	}
	return a, global
}

// TestNewLocal: the matrix built from a stripe in local numbering, and its
// distributed transpose, are the matrices New builds from the stripes in
// global numbering of the whole matrix and of its serial transpose: the same
// blocks, values and halo plans. A lower triangular matrix couples each
// stripe to lower ranks only (as the FSAI factor does), a whole one to both
// sides. Four cores make several chunks of rows on every rank count.
func TestNewLocal(t *testing.T) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
			for _, lower := range []bool{true, false} {
				full := scaled(generate(t, "poisson27:10"), lower) // 1000 rows
				fullT := transposed(full)
				for k, part := range partitions(full.N, np) {
					lo, hi := part.Range(c.Rank())
					want, err := dsmat.New(c, part, stripe(full, lo, hi))
					if err != nil {
						t.Fatal(err)
					}
					wantT, err := dsmat.New(c, part, stripe(fullT, lo, hi))
					if err != nil {
						t.Fatal(err)
					}
					a, global := localStripe(stripe(full, lo, hi))
					got, err := dsmat.NewLocal(c, part, a, global)
					if err != nil {
						t.Fatal(err)
					}
					gotT, err := got.Transpose()
					if err != nil {
						t.Fatal(err)
					}
					if !got.Equal(want) {
						t.Errorf("lower %v, partition %v: NewLocal's matrix differs from New's", lower, part.Offsets)
					}
					if !gotT.Equal(wantT) {
						t.Errorf("lower %v, partition %v: the transpose differs from New's of the serial transpose", lower, part.Offsets)
					}
					if k == 0 && (parallel.Chunks(int(hi-lo)) < 2 || np > 1 && len(want.Off)+len(wantT.Off) == 0) {
						t.Fatalf("even partition on %d ranks: one chunk of rows, or no off-diagonal blocks", np)
					}
				}
			}
		})
	}
}

// TestNewLocalRejects: a local numbering out of order, own rows that are not
// consecutive local columns, and a row with unsorted columns fail on every
// rank, whichever rank holds them.
func TestNewLocalRejects(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		full := generate(t, "poisson7:4") // 64 rows
		part := dsmat.NewPartition(full.N, 2)
		lo, hi := part.Range(c.Rank())
		for _, tc := range []struct {
			name  string
			spoil func(a *csr.Matrix[float64], global []int64) []int64
		}{
			{"descending", func(_ *csr.Matrix[float64], g []int64) []int64 {
				g[0], g[1] = g[1], g[0]
				return g
			}},
			{"own row missing", func(_ *csr.Matrix[float64], g []int64) []int64 {
				k, _ := slices.BinarySearch(g, lo+1)
				return slices.Delete(g, k, k+1)
			}},
			{"unsorted row", func(a *csr.Matrix[float64], g []int64) []int64 {
				a.ColIdx[0], a.ColIdx[1] = a.ColIdx[1], a.ColIdx[0]
				return g
			}},
		} {
			a, global := localStripe(stripe(full, lo, hi))
			if c.Rank() == 1 {
				global = tc.spoil(a, global)
				a.Cols = len(global)
			}
			if _, err := dsmat.NewLocal(c, part, a, global); err == nil {
				t.Errorf("%s on rank 1: no error on rank %d", tc.name, c.Rank())
			}
		}
	})
}
