package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// blockWidths are the column counts of the block tests.
var blockWidths = []int{1, 2, 3, 8, 16}

// blockRows is a row count whose blocks split into several goroutine ranges
// on 3 threads, most of them starting inside a row.
const blockRows = 20011

// randomCSR is a rows x cols matrix with 0 to maxLen entries per row at
// random columns.
func randomCSR(rng *rand.Rand, rows, cols, maxLen int) *csr.Matrix[float64] {
	var es []csr.Entry[float64]
	for i := 0; i < rows; i++ {
		for n := rng.IntN(maxLen + 1); n > 0; n-- {
			es = append(es, csr.Entry[float64]{Row: int32(i), Col: int32(rng.IntN(cols)), Val: rng.NormFloat64()})
		}
	}
	return csr.FromEntries(rows, cols, es)
}

func randomVector(rng *rand.Rand, n int) Vector {
	v := make(Vector, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// column returns column c of an n x k block.
func column(v []float64, k, c int) []float64 {
	out := make([]float64, len(v)/k)
	for i := range out {
		out[i] = v[i*k+c]
	}
	return out
}

// closeTo reports whether got is within 1e-13 of want relative to scale, the
// size of the terms that made want.
func closeTo(got, want, scale float64) bool {
	return math.Abs(got-want) <= 1e-13*scale
}

// TestSpMM checks SpMM against k products csr.MulVec of the columns, in both
// precisions, with beta 0 (on a y of NaN, which must not be read) and 1, with
// and without a row map (whose unmapped rows of y must stay untouched).
func TestSpMM(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := randomCSR(rng, 40000, 30000, 6) // rows for several goroutines
	rowMap := make([]int32, m.Rows)
	for i := range rowMap {
		rowMap[i] = int32(2*i + 1)
	}
	b := New(3)
	for _, p := range []backend.Precision{backend.Double, backend.Single} {
		ref := m
		if p == backend.Single {
			ref = csr.Convert[float64](csr.Convert[float32](m))
		}
		for _, mapped := range []bool{false, true} {
			var rm []int32
			yRows := m.Rows
			if mapped {
				rm, yRows = rowMap, 2*m.Rows+1
			}
			a, err := b.NewMatrix(m, rm, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range blockWidths {
				for _, beta := range []float64{0, 1} {
					name := fmt.Sprintf("%v mapped=%v k=%d beta=%g", p, mapped, k, beta)
					x, y := randomVector(rng, m.Cols*k), randomVector(rng, yRows*k)
					if beta == 0 {
						for i := range rm {
							for c := 0; c < k; c++ {
								y[int(rm[i])*k+c] = math.NaN()
							}
						}
						if rm == nil {
							for i := range y {
								y[i] = math.NaN()
							}
						}
					}
					want := append(Vector(nil), y...)
					for c := 0; c < k; c++ {
						yc, old := make([]float64, m.Rows), column(y, k, c)
						for i := range yc {
							yc[i] = old[row(rm, i)]
						}
						csr.MulVec(ref, column(x, k, c), beta, yc)
						for i, v := range yc {
							want[row(rm, i)*k+c] = v
						}
					}
					b.SpMM(y, a, x, k, beta)
					for i := range want {
						if !closeTo(y[i], want[i], math.Abs(want[i])+1) {
							t.Fatalf("%s: y[%d] = %v, want %v", name, i, y[i], want[i])
						}
					}
				}
			}
		}
	}
}

// row is the row of y that row i of a block with row map rm writes.
func row(rm []int32, i int) int {
	if rm == nil {
		return i
	}
	return int(rm[i])
}

// TestBlockVectorOps checks the element-wise block kernels and the
// per-column reductions against serial loops over the columns, on 1 and 3
// threads.
func TestBlockVectorOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, threads := range []int{1, 3} {
		b := New(threads)
		for _, k := range blockWidths {
			name := fmt.Sprintf("%d threads k=%d", threads, k)
			n := blockRows * k
			x, y, r, p, q := randomVector(rng, n), randomVector(rng, n), randomVector(rng, n), randomVector(rng, n), randomVector(rng, n)
			d := randomVector(rng, blockRows)
			a, beta := randomVector(rng, k), randomVector(rng, k)
			beta[k-1] = 0
			for i := k - 1; i < n; i += k {
				y[i] = math.NaN() // the column with beta 0: must not be read
			}

			out := make([]float64, k)
			b.DotCols(x, r, out)
			for c := 0; c < k; c++ {
				var s, scale float64
				for i := c; i < n; i += k {
					s += x[i] * r[i]
					scale += math.Abs(x[i] * r[i])
				}
				if !closeTo(out[c], s, scale) {
					t.Errorf("%s: DotCols[%d] = %v, want %v", name, c, out[c], s)
				}
			}

			xy, xz := make([]float64, k), make([]float64, k)
			b.DotPairCols(x, r, p, xy, xz)
			xp := make([]float64, k)
			b.DotCols(x, p, xp)
			for c := range k {
				if xy[c] != out[c] || xz[c] != xp[c] {
					t.Errorf("%s: DotPairCols[%d] = %v, %v; DotCols gives %v, %v", name, c, xy[c], xz[c], out[c], xp[c])
				}
			}

			want := make([]float64, n)
			for i := range want {
				c := i % k
				want[i] = a[c] * x[i]
				if beta[c] != 0 {
					want[i] += beta[c] * y[i]
				}
			}
			b.AxpbyCols(y, a, x, beta)
			checkBlock(t, name+" AxpbyCols y", y, want)

			z := make(Vector, n)
			for i := range want {
				want[i] = d[i/k] * r[i]
			}
			b.MulCols(z, d, r, k)
			checkBlock(t, name+" MulCols z", z, want)

			wantX, wantR, wantP := make([]float64, n), make([]float64, n), make([]float64, n)
			wantRR, wantRZ, scaleRZ := make([]float64, k), make([]float64, k), make([]float64, k)
			for i := range wantX {
				c := i % k
				wantR[i] = r[i] - a[c]*q[i]
				wantRR[c] += wantR[i] * wantR[i]
				wantRZ[c] += d[i/k] * wantR[i] * wantR[i]
				scaleRZ[c] += math.Abs(d[i/k] * wantR[i] * wantR[i])
				wantX[i] = x[i] + a[c]*p[i]
				wantP[i] = d[i/k]*wantR[i] + beta[c]*p[i]
			}
			rr2, rz := make([]float64, k), make([]float64, k)
			b.UpdateRZCols(r, a, q, d, rr2, rz)
			checkBlock(t, name+" UpdateRZCols r", r, wantR)
			checkBlock(t, name+" UpdateRZCols rr", rr2, wantRR)
			for c := range rz {
				if !closeTo(rz[c], wantRZ[c], scaleRZ[c]) {
					t.Errorf("%s: UpdateRZCols rz[%d] = %v, want %v", name, c, rz[c], wantRZ[c])
				}
			}
			b.UpdateXPCols(x, a, p, d, r, beta)
			checkBlock(t, name+" UpdateXPCols x", x, wantX)
			checkBlock(t, name+" UpdateXPCols p", p, wantP)
		}
	}
}

// checkBlock compares element-wise, relative to |want|.
func checkBlock(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if !closeTo(got[i], want[i], math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// BenchmarkGramSchmidt: one GMRES(30) reorthogonalization pass on 30
// vectors of 262144 entries (convdiff:64's rows), one thread: the
// projection and the next dots as AxpyMany then DotMany, against
// AxpyDotMany, which reads the vectors once; and DotMany alone.
func BenchmarkGramSchmidt(b *testing.B) {
	n, k := 262144, 30
	be := New(1)
	v := make(Vector, n*(k+1))
	for i := range v {
		v[i] = float64(i%7) * 0.1
	}
	w, a, out := v[k*n:], make([]float64, k), make([]float64, k+1)
	b.Run("AxpyMany+DotMany", func(b *testing.B) {
		for range b.N {
			be.AxpyMany(w, v, a)
			be.DotMany(v, w, out[:k])
		}
	})
	b.Run("AxpyDotMany", func(b *testing.B) {
		for range b.N {
			be.AxpyDotMany(w, v, a, out)
		}
	})
	b.Run("DotMany", func(b *testing.B) {
		for range b.N {
			be.DotMany(v, w, out[:k])
		}
	})
}
