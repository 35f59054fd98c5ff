package dsmat_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// wantRange is the range of the diagonal d as DiagonalRange defines it,
// found from Matrix.Diagonal.
func wantRange(d []float64) (lo, hi float64, ok bool) {
	lo = math.Inf(1)
	for _, v := range d {
		if !(v > 0) || math.IsInf(v, 0) {
			return 0, 0, false
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, true
}

// checkRange fails the test unless A.DiagonalRange is the range of A's
// diagonal.
func checkRange(t *testing.T, what string, A *dsmat.Matrix) {
	t.Helper()
	lo, hi, ok := A.DiagonalRange()
	wlo, whi, wok := wantRange(A.Diagonal())
	if lo != wlo || hi != whi || ok != wok {
		t.Errorf("%s: DiagonalRange = %v, %v, %v; want %v, %v, %v", what, lo, hi, ok, wlo, whi, wok)
	}
}

// setDiagonalEntry returns a copy of rows whose entry at local row i and
// its own column holds v.
func setDiagonalEntry(rows *dsmat.Rows, i int, v float64) *dsmat.Rows {
	out := *rows
	out.Val = slices.Clone(rows.Val)
	for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
		if rows.Col[k] == rows.First+int64(i) {
			out.Val[k] = v
		}
	}
	return &out
}

// TestDiagonalRange: the range that New and SetValues record as they write
// the values is the diagonal's, also where an entry is not positive or not
// finite; after ValueSlots.Set and SetDiagonal, which record none, it is
// found anew.
func TestDiagonalRange(t *testing.T) {
	for np := 1; np <= 2; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			full := generate(t, "diffusion:5")
			part := dsmat.NewPartition(full.N, np)
			lo, hi := part.Range(c.Rank())
			rows := stripe(full, lo, hi)
			A, err := dsmat.New(c, part, rows)
			if err != nil {
				t.Fatal(err)
			}
			checkRange(t, "New", A)
			if _, _, ok := A.DiagonalRange(); !ok {
				t.Errorf("New: diffusion:5 has a diagonal entry that is not positive and finite")
			}
			next := reweigh(rows)
			for _, c := range []struct {
				what string
				rows *dsmat.Rows
			}{
				{"SetValues", next},
				{"SetValues, a negative entry", setDiagonalEntry(next, 2, -2)},
				{"SetValues, an infinite entry", setDiagonalEntry(next, 3, math.Inf(1))},
				{"SetValues, a NaN", setDiagonalEntry(next, 0, math.NaN())},
				{"SetValues again", reweigh(next)},
			} {
				if err := A.SetValues(c.rows); err != nil {
					t.Fatal(err)
				}
				checkRange(t, c.what, A)
			}

			slots, err := A.NewValueSlots(rows)
			if err != nil {
				t.Fatal(err)
			}
			checkRange(t, "NewValueSlots", A)
			slots.Set(setDiagonalEntry(next, 1, 0).Val)
			checkRange(t, "ValueSlots.Set, a zero entry", A)
			slots.Set(next.Val)
			checkRange(t, "ValueSlots.Set", A)

			d := A.Diag
			A.DropDiagonal()
			copyOf := &csr.Matrix[float64]{Rows: d.Rows, Cols: d.Cols, RowPtr: d.RowPtr, ColIdx: d.ColIdx, Val: slices.Clone(d.Val)}
			for k := range copyOf.Val {
				copyOf.Val[k] *= 4
			}
			if err := A.SetDiagonal(copyOf); err != nil {
				t.Fatal(err)
			}
			checkRange(t, "SetDiagonal", A)
		})
	}
}

// TestDiagonalRangeMissing: a row without a diagonal entry makes the
// range not ok, as a zero entry does.
func TestDiagonalRangeMissing(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		// [0 1; 1 2]: row 0 holds no diagonal entry
		rows := &dsmat.Rows{N: 2, RowPtr: []int64{0, 1, 3}, Col: []int64{1, 0, 1}, Val: []float64{1, 1, 2}}
		A, err := dsmat.New(c, dsmat.NewPartition(2, 1), rows)
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi, ok := A.DiagonalRange(); ok {
			t.Errorf("DiagonalRange = %v, %v, true for a row without a diagonal entry", lo, hi)
		}
		checkRange(t, "New", A)
	})
}
