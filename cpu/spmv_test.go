package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/problem"
)

// sameBits reports the first index where got and want differ in their bits
// (-1 when none).
func sameBits(got, want []float64) int {
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return i
		}
	}
	return -1
}

// TestSpMVKernelBits: the C kernel gives the plain Go loop's bits, y and
// w'(A*x), in both precisions, with and without a row map and w, with
// beta 0 (on a y of NaN, which must not be read) and 1, over row ranges
// that start and end anywhere (groups of four rows and the rest), on rows
// of random lengths and on a stencil's (mostly groups of equal lengths).
func TestSpMVKernelBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 6))
	for _, m := range []*csr.Matrix[float64]{randomCSR(rng, 1003, 900, 11), poisson7(10)} {
		checkKernelBits(t, rng, m)
	}
}

func checkKernelBits(t *testing.T, rng *rand.Rand, m *csr.Matrix[float64]) {
	m32 := csr.Convert[float32](m)
	x := randomVector(rng, m.Cols)
	perm := rng.Perm(m.Rows + 7)[:m.Rows] // rows of a y of m.Rows+7
	rowMap := make([]int32, m.Rows)
	for i, p := range perm {
		rowMap[i] = int32(p)
	}
	w := randomVector(rng, m.Rows+7)
	for _, rm := range [][]int32{nil, rowMap} {
		for _, beta := range []float64{0, 1} {
			for _, wv := range [][]float64{nil, w} {
				for _, r := range [][2]int{{0, m.Rows}, {1, 2}, {5, 12}, {3, 1000}, {7, 7}} {
					fill := func() []float64 {
						y := randomVector(rand.New(rand.NewPCG(1, 2)), m.Rows+7)
						if beta == 0 {
							for i := range y {
								y[i] = math.NaN()
							}
						}
						return y
					}
					y64, want64 := fill(), fill()
					y32, want32 := fill(), fill()
					d64 := spmvFast(m, rm, x, beta, y64, wv, r[0], r[1])
					e64 := spmvRows(m, rm, x, beta, want64, wv, r[0], r[1])
					d32 := spmvFast(m32, rm, x, beta, y32, wv, r[0], r[1])
					e32 := spmvRows(m32, rm, x, beta, want32, wv, r[0], r[1])
					if i := sameBits(y64, want64); i >= 0 {
						t.Fatalf("double, row map %v, beta %g, rows %v: y[%d] = %v, want %v", rm != nil, beta, r, i, y64[i], want64[i])
					}
					if i := sameBits(y32, want32); i >= 0 {
						t.Fatalf("single, row map %v, beta %g, rows %v: y[%d] = %v, want %v", rm != nil, beta, r, i, y32[i], want32[i])
					}
					if sameBits([]float64{d64, d32}, []float64{e64, e32}) >= 0 {
						t.Fatalf("row map %v, beta %g, rows %v: w'y = %v, %v, want %v, %v", rm != nil, beta, r, d64, d32, e64, e32)
					}
				}
			}
		}
	}
}

// TestSpMVSplit: on rows of very uneven lengths, the threads' ranges hold
// about equal numbers of entries (within one row's of the even share), and
// the multi-threaded product gives the plain loop's y, bit for bit.
func TestSpMVSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 7))
	var es []csr.Entry[float64]
	const rows = 30000
	for i := 0; i < rows; i++ {
		n := 1
		if i < rows/10 {
			n = 40 // the first tenth of the rows holds most entries
		}
		for ; n > 0; n-- {
			es = append(es, csr.Entry[float64]{Row: int32(i), Col: int32(rng.IntN(rows)), Val: rng.NormFloat64()})
		}
	}
	m := csr.FromEntries(rows, rows, es)
	b := New(3)
	a, err := b.NewMatrix(m, nil, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	bounds := b.splitEntries(a.(*Matrix))
	if len(bounds) != 4 || bounds[0] != 0 || bounds[3] != rows {
		t.Fatalf("bounds %v: want 3 ranges over %d rows", bounds, rows)
	}
	for k := 0; k < 3; k++ {
		got := int(m.RowPtr[bounds[k+1]] - m.RowPtr[bounds[k]])
		if share := m.NNZ() / 3; got < share-40 || got > share+40 {
			t.Errorf("range %d (rows %d to %d) holds %d entries, want %d +- 40", k, bounds[k], bounds[k+1], got, share)
		}
	}
	x := randomVector(rng, rows)
	y, want := make(Vector, rows), make([]float64, rows)
	backend.SpMV(b, y, a, x, 0)
	spmvRows(m, nil, x, 0, want, nil, 0, rows)
	if i := sameBits(y, want); i >= 0 {
		t.Fatalf("y[%d] = %v, want %v", i, y[i], want[i])
	}
}

// poisson7 is the 7-point Laplacian on an n x n x n grid.
func poisson7(n int) *csr.Matrix[float64] {
	var es []csr.Entry[float64]
	id := func(i, j, k int) int32 { return int32((i*n+j)*n + k) }
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				r := id(i, j, k)
				add := func(c int32) { es = append(es, csr.Entry[float64]{Row: r, Col: c, Val: -1}) }
				if i > 0 {
					add(id(i-1, j, k))
				}
				if j > 0 {
					add(id(i, j-1, k))
				}
				if k > 0 {
					add(id(i, j, k-1))
				}
				es = append(es, csr.Entry[float64]{Row: r, Col: r, Val: 6})
				if k < n-1 {
					add(id(i, j, k+1))
				}
				if j < n-1 {
					add(id(i, j+1, k))
				}
				if i < n-1 {
					add(id(i+1, j, k))
				}
			}
		}
	}
	return csr.FromEntries(n*n*n, n*n*n, es)
}

// BenchmarkSpMV7 measures the product with poisson7(96) (884,736 rows,
// 6.1M entries, well above the caches) stored in double and single
// precision, with the backend's kernel on GOMAXPROCS threads and with the
// plain Go loop on one; the bytes are those bench-spmv counts (the
// values and column indices, the row pointers, x read and y written once).
func BenchmarkSpMV7(b *testing.B) { benchSpMV(b, poisson7(96)) }

// BenchmarkSpMVLongRows is BenchmarkSpMV7 on elasticity:32 (104,544 rows
// of up to 81 entries, 8.0M entries), whose long rows the kernel must not
// slow down against the Go loop.
func BenchmarkSpMVLongRows(b *testing.B) {
	spec, err := problem.Parse("elasticity:32")
	if err != nil {
		b.Fatal(err)
	}
	rows, err := spec.Generate(0, spec.Rows())
	if err != nil {
		b.Fatal(err)
	}
	n := rows.Count()
	m := &csr.Matrix[float64]{Rows: n, Cols: n, RowPtr: make([]int32, n+1), ColIdx: make([]int32, len(rows.Col)), Val: rows.Val}
	for i, p := range rows.RowPtr {
		m.RowPtr[i] = int32(p)
	}
	for k, c := range rows.Col {
		m.ColIdx[k] = int32(c)
	}
	benchSpMV(b, m)
}

func benchSpMV(b *testing.B, m *csr.Matrix[float64]) {
	be := New(0)
	x, y := make(Vector, m.Cols), make(Vector, m.Rows)
	for i := range x {
		x[i] = 1 / float64(i+1)
	}
	for _, p := range []backend.Precision{backend.Double, backend.Single} {
		a, err := be.NewMatrix(m, nil, p)
		if err != nil {
			b.Fatal(err)
		}
		valBytes := 8
		if p == backend.Single {
			valBytes = 4
		}
		bytes := int64((4+valBytes)*m.NNZ() + 4*(m.Rows+1) + 16*m.Rows)
		b.Run(p.String()+"/kernel", func(b *testing.B) {
			b.SetBytes(bytes)
			for b.Loop() {
				backend.SpMV(be, y, a, x, 0)
			}
		})
		b.Run(p.String()+"/goloop", func(b *testing.B) {
			am := a.(*Matrix)
			b.SetBytes(bytes)
			for b.Loop() {
				if am.f32 != nil {
					spmvRows(am.f32, nil, x, 0, y, nil, 0, m.Rows)
				} else {
					spmvRows(am.f64, nil, x, 0, y, nil, 0, m.Rows)
				}
			}
		})
	}
}
