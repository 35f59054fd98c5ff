package cpu

import (
	"math"
	"slices"
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
			backend.SpMV(b, y, a, Vector(x), 0)
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
	backend.SpMV(b, y, a, x, 1)
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

func TestUpdateRZAndXP(t *testing.T) {
	b := New(2)
	n := 50000
	x, r, p, q, d := make(Vector, n), make(Vector, n), make(Vector, n), make(Vector, n), make(Vector, n)
	for i := 0; i < n; i++ {
		x[i], r[i], p[i], q[i], d[i] = float64(i), 1, 2, 3, 0.5
	}
	rr, rz := make([]float64, 1), make([]float64, 1)
	b.UpdateRZCols(r, []float64{0.25}, q, d, rr, rz)
	// r = 1 - 0.75 = 0.25, z = d r = 0.125
	if rr[0] != float64(n)*0.0625 || rz[0] != float64(n)*0.03125 || r[9] != 0.25 {
		t.Fatalf("rr %g rz %g r[9] %g", rr[0], rz[0], r[9])
	}
	b.UpdateXPCols(x, []float64{0.25}, p, d, r, []float64{2})
	// x = i + 0.5, p = 0.125 + 2*2
	if x[7] != 7.5 || p[11] != 4.125 {
		t.Fatalf("x[7] %g p[11] %g", x[7], p[11])
	}
	b.UpdateXPCols(x, []float64{1}, p, nil, r, []float64{0})
	// without d, z = r: x = i + 0.5 + 4.125, p = 0.25
	if x[7] != 11.625 || p[11] != 0.25 {
		t.Fatalf("no diagonal: x[7] %g p[11] %g", x[7], p[11])
	}
}

// TestSpMMDot: the sums gather w[:,c]'(A*X)[:,c] over the rows each product
// computes, for one column and for blocks (of a multiple of four columns
// and not), also for a row map and beta 1 (y's old values stay out of
// them), and TakeSum sets them back to zero.
func TestSpMMDot(t *testing.T) {
	b := New(3)
	m, sm := laplace1D(100000), laplace1D(5)
	for _, k := range []int{1, 4, 7} {
		x, w := make(Vector, m.Cols*k), make(Vector, m.Rows*k)
		for i := range x {
			x[i], w[i] = math.Sin(float64(i)), math.Cos(float64(i))
		}
		a, _ := b.NewMatrix(m, nil, backend.Double)
		small, _ := b.NewMatrix(sm, []int32{1, 3, 5, 7, 9}, backend.Double)
		s, _ := b.NewSum(k)
		y := make(Vector, m.Rows*k)
		for i := range y {
			y[i] = 100
		}
		b.SpMMDot(y, a, x, k, 0, w, s)
		b.SpMMDot(y, small, x[:5*k], k, 1, w, s)
		got := make([]float64, k)
		if err := b.TakeSum(s, got); err != nil {
			t.Fatal(err)
		}
		for c := range k {
			xc, wc := make([]float64, m.Cols), make([]float64, m.Rows)
			for i := range xc {
				xc[i], wc[i] = x[i*k+c], w[i*k+c]
			}
			ref := make([]float64, m.Rows)
			csr.MulVec(m, xc, 0, ref)
			want := 0.0
			for i := range ref {
				want += wc[i] * ref[i]
			}
			part := make([]float64, 5)
			csr.MulVec(sm, xc[:5], 0, part)
			for r, v := range part {
				want += wc[2*r+1] * v // row r of the small block is row 2r+1
			}
			if math.Abs(got[c]-want) > 1e-9*math.Abs(want)+1e-9 {
				t.Fatalf("k=%d: SpMMDot sum %d = %v, want %v", k, c, got[c], want)
			}
		}
		if err := b.TakeSum(s, got); err != nil || slices.Max(got) != 0 || slices.Min(got) != 0 {
			t.Fatalf("k=%d: TakeSum left %v (%v)", k, got, err)
		}
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
		backend.SpMV(be, y, a, x, 0)
	}
}

// TestAxpbyZeroBeta: with b == 0, Axpby does not read y (NaN there stays
// out of the result), and with b != 0 it does.
func TestAxpbyZeroBeta(t *testing.T) {
	be := New(2)
	x, y := Vector{1, 2, 3}, Vector{math.NaN(), math.NaN(), 4}
	backend.Axpby(be, y, 2, x, 0)
	if y[0] != 2 || y[1] != 4 || y[2] != 6 {
		t.Fatalf("y = 2x + 0y: %v", y)
	}
	backend.Axpby(be, y, 1, x, 0.5)
	if y[0] != 2 || y[1] != 4 || y[2] != 6 {
		t.Fatalf("y = x + y/2: %v", y)
	}
}
