package cpu

import (
	"math"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// laplace1D is the n x n tridiagonal matrix (-1, 2, -1).
func laplace1D(n int) *csr.Matrix[float64] {
	var es []csr.Entry[float64]
	for i := 0; i < n; i++ {
		es = append(es, csr.Entry[float64]{Row: int32(i), Col: int32(i), Val: 2})
		if i > 0 {
			es = append(es, csr.Entry[float64]{Row: int32(i), Col: int32(i - 1), Val: -1},
				csr.Entry[float64]{Row: int32(i - 1), Col: int32(i), Val: -1})
		}
	}
	return csr.FromEntries(n, n, es)
}

func TestSpMVAgainstReference(t *testing.T) {
	for _, threads := range []int{1, 3} {
		b := New(threads)
		m := laplace1D(100000) // several chunks
		x := make([]float64, m.Cols)
		for i := range x {
			x[i] = math.Sin(float64(i))
		}
		want := make([]float64, m.Rows)
		csr.MulVec(m, x, 0, want)
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			a, err := b.NewMatrix(m, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			y := make(Vector, m.Rows)
			b.SpMV(y, a, Vector(x), 0)
			for i := range want {
				if math.Abs(y[i]-want[i]) > 1e-6*(math.Abs(want[i])+1) {
					t.Fatalf("%d threads %v: y[%d] = %g, want %g", threads, p, i, y[i], want[i])
				}
			}
		}
	}
}

func TestSpMVRowMap(t *testing.T) {
	b := New(2)
	m := laplace1D(5)
	rowMap := []int32{1, 3, 5, 7, 9}
	a, err := b.NewMatrix(m, rowMap, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	x := Vector{1, 2, 3, 4, 5}
	y := make(Vector, 10)
	for i := range y {
		y[i] = 100
	}
	b.SpMV(y, a, x, 1)
	want := Vector{100, 100, 100, 100, 100, 100, 100, 100, 100, 106} // (A x) = (0, 0, 0, 0, 6)
	for i := range want {
		if y[i] != want[i] {
			t.Fatalf("y = %v, want %v", y, want)
		}
	}
	if _, err := b.NewMatrix(m, []int32{1}, backend.Double); err == nil {
		t.Fatal("a row map of the wrong length was accepted")
	}
}

func TestUpdateXRZ(t *testing.T) {
	b := New(2)
	n := 50000
	x, r, p, q, d, z := make(Vector, n), make(Vector, n), make(Vector, n), make(Vector, n), make(Vector, n), make(Vector, n)
	for i := 0; i < n; i++ {
		x[i], r[i], p[i], q[i], d[i] = float64(i), 1, 2, 3, 0.5
	}
	rr, rz := b.UpdateXRZ(x, r, 0.25, p, q, d, z)
	// r = 1 - 0.75 = 0.25, z = 0.125, x = i + 0.5
	if rr != float64(n)*0.0625 || rz != float64(n)*0.03125 || x[7] != 7.5 || r[9] != 0.25 || z[11] != 0.125 {
		t.Fatalf("rr %g rz %g x[7] %g r[9] %g z[11] %g", rr, rz, x[7], r[9], z[11])
	}
}

// BenchmarkSpMV measures the CPU kernel on a 7-point-like band matrix.
func BenchmarkSpMV(b *testing.B) {
	be := New(0)
	m := laplace1D(1 << 21)
	a, _ := be.NewMatrix(m, nil, backend.Double)
	x, y := make(Vector, m.Cols), make(Vector, m.Rows)
	b.SetBytes(int64(12*m.NNZ() + 4*(m.Rows+1) + 16*m.Rows))
	for b.Loop() {
		be.SpMV(y, a, x, 0)
	}
}

// TestAxpbyZeroBeta: with b == 0, Axpby does not read y (NaN there stays
// out of the result), and with b != 0 it does.
func TestAxpbyZeroBeta(t *testing.T) {
	be := New(2)
	x, y := Vector{1, 2, 3}, Vector{math.NaN(), math.NaN(), 4}
	be.Axpby(y, 2, x, 0)
	if y[0] != 2 || y[1] != 4 || y[2] != 6 {
		t.Fatalf("y = 2x + 0y: %v", y)
	}
	be.Axpby(y, 1, x, 0.5)
	if y[0] != 2 || y[1] != 4 || y[2] != 6 {
		t.Fatalf("y = x + y/2: %v", y)
	}
}
