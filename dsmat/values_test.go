package dsmat_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// reweigh returns a copy of rows with every value changed, the pattern kept.
func reweigh(rows *dsmat.Rows) *dsmat.Rows {
	out := *rows
	out.Val = make([]float64, len(rows.Val))
	for k, v := range rows.Val {
		out.Val[k] = v * (1.5 + math.Sin(float64(k)))
	}
	return &out
}

// TestSetValues: after SetValues and Refresh, the operator multiplies with
// the new values (double and single precision); a stripe with another
// pattern is refused and changes nothing.
func TestSetValues(t *testing.T) {
	for np := 1; np <= 3; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, spec := range []string{"poisson7:6", "diffusion:5"} {
				full := generate(t, spec)
				part := dsmat.NewPartition(full.N, np)
				lo, hi := part.Range(c.Rank())
				rows := stripe(full, lo, hi)
				for _, p := range []backend.Precision{backend.Double, backend.Single} {
					A, op := bindCPU(t, c, part, rows, p)
					next := reweigh(rows)
					if err := A.SetValues(next); err != nil {
						t.Fatal(err)
					}
					if err := op.Refresh(); err != nil {
						t.Fatal(err)
					}
					checkProduct(t, c, op, next, p)

					// a valid stripe without its last entry
					nnz := len(next.Col) - 1
					other := dsmat.Rows{N: next.N, First: next.First, RowPtr: slices.Clone(next.RowPtr),
						Col: next.Col[:nnz], Val: next.Val[:nnz]}
					other.RowPtr[len(other.RowPtr)-1]--
					before := A.Diagonal()
					if err := A.SetValues(&other); err == nil {
						t.Errorf("%s: SetValues accepted another pattern", spec)
					}
					if !slices.Equal(A.Diagonal(), before) {
						t.Errorf("%s: a refused SetValues changed the values", spec)
					}
					op.Free()
				}
			}
		})
	}
}

// TestValueSlots: values stored through ValueSlots give the operator what
// SetValues gives it, on stripes with left and right blocks.
func TestValueSlots(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		full := generate(t, "diffusion:5")
		part := dsmat.NewPartition(full.N, 3)
		lo, hi := part.Range(c.Rank())
		rows := stripe(full, lo, hi)
		A, op := bindCPU(t, c, part, rows, backend.Double)
		defer op.Free()
		slots, err := A.NewValueSlots(rows)
		if err != nil {
			t.Fatal(err)
		}
		next := reweigh(rows)
		slots.Set(next.Val)
		if err := op.Refresh(); err != nil {
			t.Fatal(err)
		}
		checkProduct(t, c, op, next, backend.Double)
	})
}

// checkProduct multiplies by probe and compares each row with the serial
// product of the stripe rows, which holds global column indices.
func checkProduct(t *testing.T, c *comm.Comm, op *dsmat.Operator, rows *dsmat.Rows, p backend.Precision) {
	t.Helper()
	be, n := op.Backend(), rows.Count()
	x, _ := be.NewVector(n)
	y, _ := be.NewVector(n)
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = probe(rows.First + int64(i))
	}
	be.Upload(x, xs)
	if err := op.Apply(y, x); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, n)
	if err := be.Download(got, y); err != nil {
		t.Fatal(err)
	}
	tol := 1e-13
	if p == backend.Single {
		tol = 1e-6
	}
	for i := 0; i < n; i++ {
		var want, scale float64
		for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
			want += rows.Val[k] * probe(rows.Col[k])
			scale += math.Abs(rows.Val[k] * probe(rows.Col[k]))
		}
		if math.Abs(got[i]-want) > tol*scale {
			t.Fatalf("rank %d row %d: got %.17g want %.17g", c.Rank(), rows.First+int64(i), got[i], want)
		}
	}
}

// TestSetValuesNamesFirstRow: with rows in several chunks checked on their
// own cores, a stripe whose pattern differs in two rows is refused naming
// the first of them, and no value changes.
func TestSetValuesNamesFirstRow(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		full := generate(t, "poisson7:10") // 1000 rows
		part := dsmat.NewPartition(full.N, 1)
		A, op := bindCPU(t, c, part, full, backend.Double)
		defer op.Free()
		other := reweigh(full)
		other.Col = slices.Clone(full.Col)
		for _, row := range []int{700, 300} { // the last entry of each row gets another column
			other.Col[other.RowPtr[row+1]-1]++
		}
		before := slices.Clone(A.Diag.Val)
		err := A.SetValues(other)
		if err == nil || !strings.Contains(err.Error(), "row 300:") {
			t.Fatalf("SetValues with rows 300 and 700 changed: error %v, want one naming row 300", err)
		}
		if !slices.Equal(A.Diag.Val, before) {
			t.Error("a refused SetValues changed the values")
		}
	})
}
