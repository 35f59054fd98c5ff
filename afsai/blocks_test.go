package afsai

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// globalRows turns the local rows of G into the rank's stripe in global
// numbering; local order is global order, so columns stay sorted. New made
// G's blocks from it with dsmat.New before dsmat.NewLocal; the tests check
// the blocks against that.
func globalRows(A *dsmat.Matrix, ls *localSystem, g *csr.Matrix[float64]) *dsmat.Rows {
	r := &dsmat.Rows{N: A.N(), First: A.First(), RowPtr: make([]int64, g.Rows+1),
		Col: make([]int64, g.NNZ()), Val: g.Val}
	parallel.For(g.Rows+1, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			r.RowPtr[i] = int64(g.RowPtr[i])
		}
	})
	global := ls.globals()
	parallel.For(g.NNZ(), func(_, lo, hi int) {
		for k, c := range g.ColIdx[lo:hi] {
			r.Col[lo+k] = global[c]
		}
	})
	return r
}

// wholeRows gathers the stripes of all ranks into the whole matrix, as one
// stripe on every rank.
func wholeRows(t *testing.T, c *comm.Comm, r *dsmat.Rows) *dsmat.Rows {
	t.Helper()
	np := c.Size()
	sizes := make([]int64, 2*np) // every rank's rows, then its entries
	sizes[c.Rank()], sizes[np+c.Rank()] = int64(r.Count()), r.NNZ()
	if err := comm.Allreduce(c, comm.Sum, sizes); err != nil {
		t.Fatal(err)
	}
	rowCounts, nnzCounts, nnz := make([]int, np), make([]int, np), 0
	for q := range np {
		rowCounts[q], nnzCounts[q] = int(sizes[q]), int(sizes[np+q])
		nnz += nnzCounts[q]
	}
	lens := make([]int64, r.Count())
	for i := range lens {
		lens[i] = r.RowPtr[i+1] - r.RowPtr[i]
	}
	w := &dsmat.Rows{N: r.N, RowPtr: make([]int64, r.N+1), Col: make([]int64, nnz), Val: make([]float64, nnz)}
	all := w.RowPtr[1:] // the row lengths, summed below
	for _, err := range []error{
		comm.Gatherv(c, lens, all, rowCounts, 0),
		comm.Gatherv(c, r.Col, w.Col, nnzCounts, 0),
		comm.Gatherv(c, r.Val, w.Val, nnzCounts, 0),
		comm.Bcast(c, all, 0),
		comm.Bcast(c, w.Col, 0),
		comm.Bcast(c, w.Val, 0),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range all {
		w.RowPtr[i+1] += w.RowPtr[i]
	}
	return w
}

// transposeWhole returns the transpose of a whole matrix held as one stripe,
// serially.
func transposeWhole(w *dsmat.Rows) *dsmat.Rows {
	a := &csr.Matrix[float64]{Rows: w.Count(), Cols: int(w.N), RowPtr: make([]int32, len(w.RowPtr)),
		ColIdx: make([]int32, len(w.Col)), Val: w.Val}
	for i, p := range w.RowPtr {
		a.RowPtr[i] = int32(p)
	}
	for k, c := range w.Col {
		a.ColIdx[k] = int32(c)
	}
	return testmatrices.Stripe(csr.Transpose(a))
}

// TestFactorBlocks: G's blocks made straight from the local system's
// numbering (dsmat.NewLocal) are those dsmat.New makes of G's stripe in
// global numbering, and G' (Matrix.Transpose) is what dsmat.New makes of the
// stripe of the serial transpose of the whole G: the same blocks, values bit
// for bit, and halo plans, on every rank count.
func TestFactorBlocks(t *testing.T) {
	for _, np := range []int{1, 2, 3, 4} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, dc := range distCases(t, c) {
				for _, setup := range []backend.Precision{backend.Double, backend.Single} {
					cfg := DefaultConfig()
					cfg.Setup = setup
					ls, g := localFactor(t, dc, cfg, cfg.reach())
					part := dc.A.Part
					lo, hi := part.Range(c.Rank())
					rows := globalRows(dc.A, ls, g)
					want, err := dsmat.New(c, part, rows)
					if err != nil {
						t.Fatal(err)
					}
					wantT, err := dsmat.New(c, part, cut(transposeWhole(wholeRows(t, c, rows)), lo, hi))
					if err != nil {
						t.Fatal(err)
					}
					got, err := dsmat.NewLocal(c, part, g, ls.globals()) // takes g, which rows shares
					if err != nil {
						t.Fatal(err)
					}
					gotT, err := got.Transpose()
					if err != nil {
						t.Fatal(err)
					}
					if !got.Equal(want) {
						t.Errorf("%s, %v set-up: G's blocks differ", dc.name, setup)
					}
					if !gotT.Equal(wantT) {
						t.Errorf("%s, %v set-up: G''s blocks differ", dc.name, setup)
					}
				}
			}
		})
	}
}
