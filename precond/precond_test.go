package precond_test

import (
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/precond"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// diagonalMatrix is the n x n diagonal matrix d, on this one rank.
func diagonalMatrix(t *testing.T, c *comm.Comm, d []float64) *dsmat.Matrix {
	t.Helper()
	n := int64(len(d))
	rows := &dsmat.Rows{N: n, RowPtr: []int64{0}}
	for i, v := range d {
		rows.Col = append(rows.Col, int64(i))
		rows.Val = append(rows.Val, v)
		rows.RowPtr = append(rows.RowPtr, int64(i+1))
	}
	A, err := dsmat.New(c, dsmat.NewPartition(n, 1), rows)
	if err != nil {
		t.Fatal(err)
	}
	return A
}

// TestJacobiNonzero: NewJacobiNonzero scales by the inverse diagonal of
// either sign and refuses a zero one; NewJacobi refuses a negative one.
func TestJacobiNonzero(t *testing.T) {
	mpitest.Run(t, 1, func(t *testing.T, c *comm.Comm) {
		be := cpu.New(1)
		defer be.Close()
		d := []float64{2, -4, 0.5, -8}
		M, err := precond.NewJacobiNonzero(diagonalMatrix(t, c, d), be)
		if err != nil {
			t.Fatal(err)
		}
		defer M.Free()
		r, err := ddmat.New(c, be, len(d), 1)
		if err != nil {
			t.Fatal(err)
		}
		z, err := ddmat.New(c, be, len(d), 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Set([]float64{1, 1, 1, 1}); err != nil {
			t.Fatal(err)
		}
		if err := M.Apply(z, r); err != nil {
			t.Fatal(err)
		}
		got := make([]float64, len(d))
		if err := z.Get(got); err != nil {
			t.Fatal(err)
		}
		for i, v := range d {
			if got[i] != 1/v {
				t.Errorf("z[%d] = %g, want %g", i, got[i], 1/v)
			}
		}
		for _, tc := range []struct {
			d    []float64
			spd  bool
			want string
		}{
			{[]float64{1, 0, 1}, false, "jacobi: diagonal entry 0 at row 2: Jacobi divides by it"},
			{[]float64{1, -1, 1}, true, "jacobi: diagonal entry -1 at row 2 is not positive: the matrix is not SPD"},
		} {
			newJacobi := precond.NewJacobiNonzero
			if tc.spd {
				newJacobi = precond.NewJacobi
			}
			if _, err := newJacobi(diagonalMatrix(t, c, tc.d), be); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("diagonal %v: error %v, want %q", tc.d, err, tc.want)
			}
		}
	})
}
