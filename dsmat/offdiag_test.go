package dsmat_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// splitLocal splits a local stripe (localStripe) at the stripe's own
// columns: the entries in other ranks' columns, in the local numbering, and
// the diagonal block, its columns numbered from the stripe's first row.
func splitLocal(a *csr.Matrix[float64], global []int64, first int64) (off, diag *csr.Matrix[float64]) {
	own, _ := slices.BinarySearch(global, first)
	n := a.Rows
	off = &csr.Matrix[float64]{Rows: n, Cols: a.Cols, RowPtr: make([]int32, n+1)}
	diag = &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, n+1)}
	for i := range n {
		cols, vals := a.Row(i)
		for k, c := range cols {
			if int(c) >= own && int(c) < own+n {
				diag.ColIdx, diag.Val = append(diag.ColIdx, c-int32(own)), append(diag.Val, vals[k])
			} else {
				off.ColIdx, off.Val = append(off.ColIdx, c), append(off.Val, vals[k])
			}
		}
		off.RowPtr[i+1], diag.RowPtr[i+1] = int32(len(off.ColIdx)), int32(len(diag.ColIdx))
	}
	return off, diag
}

// held is the part of a local numbering's global indices before the
// stripe's first row, lo: NewLocalOffDiagonal's held columns.
func held(global []int64, lo int64) []int64 {
	own, _ := slices.BinarySearch(global, lo)
	return global[:own]
}

// TestNewLocalOffDiagonal: a matrix whose diagonal block a backend holds
// (FSAI's factor from a GPU set-up), given all the stripe's rows or only
// those with entries (listed), is NewLocal's without its Diag, its
// transpose likewise; bound with the backend's blocks they multiply as
// NewLocal's matrices bound the usual way, and SetDiagonal completes them
// into NewLocal's. Before that, what needs the host block refuses.
func TestNewLocalOffDiagonal(t *testing.T) {
	for np := 1; np <= 3; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := cpu.New(1)
			full := scaled(generate(t, "poisson27:8"), true) // 512 rows, lower triangular
			part := dsmat.NewPartition(full.N, np)
			lo, hi := part.Range(c.Rank())
			n := int(hi - lo)

			a, global := localStripe(stripe(full, lo, hi))
			want, err := dsmat.NewLocal(c, part, a, global)
			if err != nil {
				t.Fatal(err)
			}
			wantT, err := want.Transpose()
			if err != nil {
				t.Fatal(err)
			}
			for _, listed := range []bool{false, true} {
				a, global = localStripe(stripe(full, lo, hi))
				off, diag := splitLocal(a, global, lo)
				var rows []int32
				if listed {
					off, rows = listedRows(off)
				}
				got, err := dsmat.NewLocalOffDiagonal(c, part, off, rows, held(global, lo), diag.NNZ())
				if err != nil {
					t.Fatal(err)
				}
				gotT, err := got.Transpose()
				if err != nil {
					t.Fatal(err)
				}
				if got.Diag != nil || gotT.Diag != nil || got.NNZ() != want.NNZ() || gotT.NNZ() != wantT.NNZ() ||
					got.LocalRows() != n || len(got.Off) != len(want.Off) || len(gotT.Off) != len(wantT.Off) {
					t.Fatalf("rank %d: Diag %v/%v, nnz %d/%d (want %d/%d), off blocks %d/%d (want %d/%d)", c.Rank(),
						got.Diag != nil, gotT.Diag != nil, got.NNZ(), gotT.NNZ(), want.NNZ(), wantT.NNZ(),
						len(got.Off), len(gotT.Off), len(want.Off), len(wantT.Off))
				}
				if _, err := got.Bind(be, backend.Double); err == nil {
					t.Error("Bind of a matrix without its diagonal block succeeded")
				}
				for _, pair := range []struct {
					name      string
					got, want *dsmat.Matrix
					diag      *csr.Matrix[float64]
				}{{"G", got, want, diag}, {"G'", gotT, wantT, csr.Transpose(diag)}} {
					block, err := be.NewMatrix(pair.diag, nil, backend.Double)
					if err != nil {
						t.Fatal(err)
					}
					op, err := pair.got.BindDiagonal(be, block, backend.Double)
					if err != nil {
						t.Fatal(err)
					}
					defer op.Free()
					ref, err := pair.want.Bind(be, backend.Double)
					if err != nil {
						t.Fatal(err)
					}
					defer ref.Free()
					if y, w := product(t, op, lo), product(t, ref, lo); !slices.Equal(y, w) {
						t.Errorf("rank %d: %s bound with the backend's block multiplies differently", c.Rank(), pair.name)
					}
					if err := op.Refresh(); err == nil {
						t.Errorf("%s: Refresh without the host block succeeded", pair.name)
					}
					if err := pair.got.SetDiagonal(csr.Transpose(csr.Transpose(pair.diag))); err != nil {
						t.Fatal(err)
					}
					if !pair.got.Equal(pair.want) {
						t.Errorf("rank %d: %s with SetDiagonal differs from NewLocal's", c.Rank(), pair.name)
					}
					if err := pair.got.SetDiagonal(pair.diag); err == nil {
						t.Errorf("%s: a second SetDiagonal succeeded", pair.name)
					}
					if err := op.Refresh(); err != nil {
						t.Errorf("%s: Refresh after SetDiagonal: %v", pair.name, err)
					}
				}
			}
		})
	}
}

// TestNewLocalOffDiagonalRejects: entries of the diagonal block in the
// stripe, its rows listed out of order, or held columns that reach into the
// stripe, on one rank, fail on every rank.
func TestNewLocalOffDiagonalRejects(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		full := scaled(generate(t, "poisson7:4"), true)
		part := dsmat.NewPartition(full.N, 2)
		lo, hi := part.Range(c.Rank())
		for _, bad := range []string{"diagonal-block entries", "rows out of order", "held columns in the stripe"} {
			a, global := localStripe(stripe(full, lo, hi))
			off, _ := splitLocal(a, global, lo)
			off, rows := listedRows(off)
			cols := held(global, lo)
			if c.Rank() == 1 {
				switch bad {
				case "diagonal-block entries":
					off, rows = a, nil // the whole stripe
				case "held columns in the stripe":
					cols = global
				default:
					rows = append(rows, 0) // a row before the last
					off = &csr.Matrix[float64]{Rows: len(rows), Cols: off.Cols, RowPtr: append(off.RowPtr, off.RowPtr[off.Rows]),
						ColIdx: off.ColIdx, Val: off.Val}
				}
			}
			if _, err := dsmat.NewLocalOffDiagonal(c, part, off, rows, cols, 10); err == nil {
				t.Errorf("a stripe with %s on rank 1: no error on rank %d", bad, c.Rank())
			}
		}
	})
}

// listedRows returns the rows of a that hold entries, as a matrix of those
// rows, and their list.
func listedRows(a *csr.Matrix[float64]) (*csr.Matrix[float64], []int32) {
	out := &csr.Matrix[float64]{Cols: a.Cols, RowPtr: []int32{0}}
	rows := []int32{} // not nil: nil lists every row
	for i := range a.Rows {
		cols, vals := a.Row(i)
		if len(cols) > 0 {
			rows = append(rows, int32(i))
			out.ColIdx, out.Val = append(out.ColIdx, cols...), append(out.Val, vals...)
			out.RowPtr = append(out.RowPtr, int32(len(out.ColIdx)))
		}
	}
	out.Rows = len(rows)
	return out, rows
}

// product returns op times probe on this rank's rows, from row lo on.
func product(t *testing.T, op *dsmat.Operator, lo int64) []float64 {
	t.Helper()
	be, n := op.Backend(), op.Matrix().LocalRows()
	x, _ := be.NewVector(n)
	y, _ := be.NewVector(n)
	defer x.Free()
	defer y.Free()
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = probe(lo + int64(i))
	}
	be.Upload(x, xs)
	be.Fill(y, math.NaN())
	if err := op.Apply(y, x); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n)
	if err := be.Download(out, y); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNewLocalOffDiagonalBothSides: a stripe whose entries in other ranks'
// columns lie on both sides of its rows (SPAI's M), held columns below and
// above them, is New's matrix without its Diag: with SetDiagonal, equal to
// it, on 2 and 3 ranks.
func TestNewLocalOffDiagonalBothSides(t *testing.T) {
	for _, np := range []int{2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			full := scaled(generate(t, "poisson7:5"), false)
			part := dsmat.NewPartition(full.N, np)
			lo, hi := part.Range(c.Rank())
			rows := stripe(full, lo, hi)
			want, err := dsmat.New(c, part, rows)
			if err != nil {
				t.Fatal(err)
			}
			var heldCols []int64 // the other ranks' columns, ascending
			for _, col := range rows.Col {
				if col < lo || col >= hi {
					heldCols = append(heldCols, col)
				}
			}
			slices.Sort(heldCols)
			heldCols = slices.Compact(heldCols)
			n := int(hi - lo)
			off := &csr.Matrix[float64]{Rows: n, Cols: len(heldCols), RowPtr: make([]int32, n+1)}
			for i := range n {
				for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
					if col := rows.Col[k]; col < lo || col >= hi {
						at, _ := slices.BinarySearch(heldCols, col)
						off.ColIdx, off.Val = append(off.ColIdx, int32(at)), append(off.Val, rows.Val[k])
					}
				}
				off.RowPtr[i+1] = int32(len(off.ColIdx))
			}
			if heldCols[0] >= lo == (c.Rank() > 0) || heldCols[len(heldCols)-1] < hi == (c.Rank() < np-1) {
				t.Fatalf("rank %d of %d: held columns %d to %d around rows [%d,%d)", c.Rank(), np, heldCols[0],
					heldCols[len(heldCols)-1], lo, hi)
			}
			got, err := dsmat.NewLocalOffDiagonal(c, part, off, nil, heldCols, want.Diag.NNZ())
			if err != nil {
				t.Fatal(err)
			}
			if err := got.SetDiagonal(want.Diag); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) || got.NNZ() != want.NNZ() {
				t.Errorf("rank %d of %d: differs from New's matrix", c.Rank(), np)
			}
		})
	}
}
