package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// blockWidths are the column counts of the block tests: one column (the
// one-column kernels), up to a warp of column lanes, two columns per lane
// (33), and more than one launch's chunk (70 = 64 + 6).
var blockWidths = []int{1, 2, 3, 8, 16, 33, 70}

// absBlock returns |v| element-wise.
func absBlock(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	return out
}

// TestSpMM compares SpMM and SpMMDot with the CPU backend's on the SpMV
// test matrices, in both precisions, with and without a row map, with beta
// 0 (on a y of NaN in the rows written: they must not be read) and 1, for
// every split of a row's entries (the matrix's SpMV width sets it) and
// every column count; SpMMDot's sums must also be deterministic.
func TestSpMM(t *testing.T) {
	b := openGPU(t)
	ref := cpu.New(1)
	rng := rand.New(rand.NewPCG(31, 32))
	for name, m := range testMatrices(t) {
		rowMap := make([]int32, m.Rows)
		for i := range rowMap {
			rowMap[i] = int32(2*i + 1)
		}
		abs := &csr.Matrix[float64]{Rows: m.Rows, Cols: m.Cols, RowPtr: m.RowPtr, ColIdx: m.ColIdx, Val: absBlock(m.Val)}
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			for _, rm := range [][]int32{nil, rowMap} {
				yRows := m.Rows
				if rm != nil {
					yRows = 2*m.Rows + 1
				}
				a, err := b.NewMatrix(m, rm, p)
				if err != nil {
					t.Fatal(err)
				}
				ra, _ := ref.NewMatrix(m, rm, p)
				rabs, _ := ref.NewMatrix(abs, rm, p)
				g := a.(*Matrix)
				for _, w := range spmvWidths {
					g.width = w
					for _, k := range blockWidths {
						x := randomVec(rng, m.Cols*k)
						xv := newVec(t, b, x)
						for _, beta := range []float64{0, 1} {
							what := fmt.Sprintf("%s %v map=%v width=%d k=%d beta=%g", name, p, rm != nil, w, k, beta)
							y := randomVec(rng, yRows*k)
							if beta == 0 {
								for i := 0; i < m.Rows; i++ {
									for c := 0; c < k; c++ {
										y[mappedRow(rm, i)*k+c] = math.NaN()
									}
								}
							}
							want := append(cpu.Vector(nil), y...)
							ref.SpMM(want, ra, cpu.Vector(x), k, beta)
							scale := cpu.Vector(absBlock(y)) // sum |a_ij x_jc| + |y_ic|: the size of rounding
							for i, v := range scale {
								if math.IsNaN(v) {
									scale[i] = 0
								}
							}
							ref.SpMM(scale, rabs, cpu.Vector(absBlock(x)), k, beta)
							wh := randomVec(rng, yRows*k) // SpMMDot's w, indexed like y
							dots, dotScale := make([]float64, k), make([]float64, k)
							refDots(t, ref, ra, rabs, x, wh, k, dots, dotScale)
							wv := newVec(t, b, wh)
							for _, c := range append([]int{0}, spmmPerLane[:]...) {
								what := fmt.Sprintf("%s columns per lane %d", what, c)
								yv := newVec(t, b, y)
								b.spmm(yv, a, xv, k, beta, nil, nil, c)
								checkClose(t, what, download(t, b, yv), want, scale, 1e-13)
								checkSpMMDot(t, b, what, y, a, xv, k, beta, wv, c, want, scale, dots, dotScale)
							}
						}
					}
				}
				a.Free()
			}
		}
	}
}

// refDots sets dots[c] to the CPU backend's w[:,c]'(A*X)[:,c] for the
// block ra, and scale[c] to the same with |A|, |X| and |w| (rabs the block
// of |A|): the size of its rounding.
func refDots(t *testing.T, ref *cpu.Backend, ra, rabs backend.Matrix, x, w []float64, k int, dots, scale []float64) {
	t.Helper()
	s, _ := ref.NewSum(k)
	y := make(cpu.Vector, len(w))
	ref.SpMMDot(y, ra, cpu.Vector(x), k, 0, cpu.Vector(w), s)
	if err := ref.TakeSum(s, dots); err != nil {
		t.Fatal(err)
	}
	ref.SpMMDot(y, rabs, cpu.Vector(absBlock(x)), k, 0, cpu.Vector(absBlock(w)), s)
	if err := ref.TakeSum(s, scale); err != nil {
		t.Fatal(err)
	}
}

// checkSpMMDot runs SpMMDot with perLane columns per lane twice on y0: the
// product must be want (within rounding of scale, as SpMM) and the
// columns' dot products with w must be dots (within rounding of dotScale)
// and the same bits both times.
func checkSpMMDot(t *testing.T, b *Backend, what string, y0 []float64, a backend.Matrix, x backend.Vector, k int,
	beta float64, w backend.Vector, perLane int, want, scale, dots, dotScale []float64) {
	t.Helper()
	s, err := b.NewSum(k)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Free()
	var first []float64
	for round := range 2 {
		y := newVec(t, b, y0)
		b.spmm(y, a, x, k, beta, w, s, perLane)
		got := make([]float64, k)
		if err := b.TakeSum(s, got); err != nil {
			t.Fatal(err)
		}
		checkClose(t, what+" SpMMDot's product", download(t, b, y), want, scale, 1e-13)
		checkClose(t, what+" SpMMDot's sums", got, dots, dotScale, 1e-12)
		if round == 0 {
			first = got
			continue
		}
		for c := range got {
			if math.Float64bits(got[c]) != math.Float64bits(first[c]) {
				t.Fatalf("%s: SpMMDot's sum %d: %v then %v: not deterministic", what, c, first[c], got[c])
			}
		}
	}
}

// mappedRow is the row of y that row i of a block with row map rm writes.
func mappedRow(rm []int32, i int) int {
	if rm == nil {
		return i
	}
	return int(rm[i])
}

// TestBlockVectorOps compares the element-wise block kernels and the
// per-column reductions with the CPU backend's, checks that the reductions
// are deterministic, and that the one-column reductions still work on the
// reduction scratch the block ones widened.
func TestBlockVectorOps(t *testing.T) {
	b := openGPU(t)
	ref := cpu.New(1)
	rng := rand.New(rand.NewPCG(33, 34))
	for _, rows := range []int{1, 1000, 100003} {
		for _, k := range blockWidths {
			what := fmt.Sprintf("rows=%d k=%d", rows, k)
			n := rows * k
			xh, yh, rh, ph, qh := randomVec(rng, n), randomVec(rng, n), randomVec(rng, n), randomVec(rng, n), randomVec(rng, n)
			dh, a, beta := randomVec(rng, rows), randomVec(rng, k), randomVec(rng, k)
			beta[k-1] = 0
			for i := k - 1; i < n; i += k {
				yh[i] = math.NaN() // the column with b = 0: must not be read
			}
			x, y, r, p, q, d := newVec(t, b, xh), newVec(t, b, yh), newVec(t, b, rh), newVec(t, b, ph), newVec(t, b, qh), newVec(t, b, dh)
			z := newVec(t, b, make([]float64, n))

			got, want := make([]float64, k), make([]float64, k)
			b.DotCols(x, r, got)
			ref.DotCols(cpu.Vector(xh), cpu.Vector(rh), want)
			scale := make([]float64, k)
			ref.DotCols(cpu.Vector(absBlock(xh)), cpu.Vector(absBlock(rh)), scale)
			checkClose(t, what+" DotCols", got, want, scale, 1e-12)
			again := make([]float64, k)
			b.DotCols(x, r, again)
			for c := range got {
				if math.Float64bits(got[c]) != math.Float64bits(again[c]) {
					t.Fatalf("%s: DotCols not deterministic: column %d %v then %v", what, c, got[c], again[c])
				}
			}

			xy, xz := make([]float64, k), make([]float64, k)
			b.DotPairCols(x, r, p, xy, xz)
			wantXZ, scaleXZ := make([]float64, k), make([]float64, k)
			ref.DotCols(cpu.Vector(xh), cpu.Vector(ph), wantXZ)
			ref.DotCols(cpu.Vector(absBlock(xh)), cpu.Vector(absBlock(ph)), scaleXZ)
			checkClose(t, what+" DotPairCols x'y", xy, want, scale, 1e-12)
			checkClose(t, what+" DotPairCols x'z", xz, wantXZ, scaleXZ, 1e-12)

			wantY := cpu.Vector(append([]float64(nil), yh...))
			ref.AxpbyCols(wantY, a, cpu.Vector(xh), beta)
			yScale := cpu.Vector(absBlock(yh)) // its NaN column has b = 0: not read
			ref.AxpbyCols(yScale, absBlock(a), cpu.Vector(absBlock(xh)), absBlock(beta))
			b.AxpbyCols(y, a, x, beta)
			checkClose(t, what+" AxpbyCols", download(t, b, y), wantY, yScale, 1e-15)

			wantZ := make(cpu.Vector, n)
			ref.MulCols(wantZ, cpu.Vector(dh), cpu.Vector(rh), k)
			b.MulCols(z, d, r, k)
			checkClose(t, what+" MulCols", download(t, b, z), wantZ, nil, 0)

			// The CPU updates copies; their term sizes bound the rounding.
			wx, wr, wp := append(cpu.Vector(nil), xh...), append(cpu.Vector(nil), rh...), append(cpu.Vector(nil), ph...)
			wantRR, wantRZ, rzScale := make([]float64, k), make([]float64, k), make([]float64, k)
			ref.UpdateRZCols(wr, a, cpu.Vector(qh), cpu.Vector(dh), wantRR, wantRZ)
			ref.UpdateXPCols(wx, a, wp, cpu.Vector(dh), wr, beta)
			sx, sr, sp, ones := cpu.Vector(absBlock(xh)), cpu.Vector(absBlock(rh)), make(cpu.Vector, n), make([]float64, k)
			for c := range ones {
				ones[c] = 1
			}
			ref.AxpbyCols(sx, absBlock(a), cpu.Vector(absBlock(ph)), ones) // |x| + |a||p|
			ref.AxpbyCols(sr, absBlock(a), cpu.Vector(absBlock(qh)), ones) // |r| + |a||q|
			ref.MulCols(sp, cpu.Vector(absBlock(dh)), sr, k)
			ref.AxpbyCols(sp, absBlock(beta), cpu.Vector(absBlock(ph)), ones) // |d||r| + |b||p|
			rzScale2 := make([]float64, k)
			ref.UpdateRZCols(append(cpu.Vector(nil), absBlock(wr)...), make([]float64, k), cpu.Vector(absBlock(qh)),
				cpu.Vector(absBlock(dh)), rzScale2, rzScale) // sum |d| r^2

			rr2, rz := make([]float64, k), make([]float64, k)
			b.UpdateRZCols(r, a, q, d, rr2, rz)
			checkClose(t, what+" UpdateRZCols r", download(t, b, r), wr, sr, 1e-15)
			checkClose(t, what+" UpdateRZCols rr", rr2, wantRR, nil, 1e-12)
			checkClose(t, what+" UpdateRZCols rz", rz, wantRZ, rzScale, 1e-12)
			b.UpdateXPCols(x, a, p, d, r, beta)
			checkClose(t, what+" UpdateXPCols x", download(t, b, x), wx, sx, 1e-15)
			checkClose(t, what+" UpdateXPCols p", download(t, b, p), wp, sp, 1e-15)
			// without a diagonal, z = r; the bounds carry the earlier
			// ones: x += a p gets |a| times p's, p = r + b p gets r's
			// and |b| times p's
			ref.AxpbyCols(sx, absBlock(a), sp, ones)
			ref.AxpbyCols(sp, ones, sr, absBlock(beta))
			ref.UpdateXPCols(wx, a, wp, nil, wr, beta)
			b.UpdateXPCols(x, a, p, nil, r, beta)
			checkClose(t, what+" UpdateXPCols x, no diagonal", download(t, b, x), wx, sx, 1e-14)
			checkClose(t, what+" UpdateXPCols p, no diagonal", download(t, b, p), wp, sp, 1e-14)

			var dot, dotScale float64
			pNow := download(t, b, p) // the updates changed p
			for i := range xh {
				dot += xh[i] * pNow[i]
				dotScale += math.Abs(xh[i] * pNow[i])
			}
			if got := backend.Dot(b, newVec(t, b, xh), p); !near(got, dot, dotScale, 1e-12) {
				t.Fatalf("%s: Dot after the block reductions = %v, want %v", what, got, dot)
			}
		}
	}
}

// TestBlockErrors checks that block calls with bad sizes record an error
// naming the call, and that per-column sums are NaN after it.
func TestBlockErrors(t *testing.T) {
	b := openUnclosed(t)
	x, _ := b.NewVector(10)
	b.AxpbyCols(x, []float64{1, 2, 3}, x, []float64{0, 0, 0}) // 10 entries are not rows of 3
	if err := b.Sync(); err == nil || !strings.Contains(err.Error(), "AxpbyCols") {
		t.Errorf("Sync after a bad block: %v", err)
	}
	out := []float64{1, 2}
	b.DotCols(x, x, out)
	if !math.IsNaN(out[0]) || !math.IsNaN(out[1]) {
		t.Errorf("DotCols after an error = %v, want NaNs", out)
	}
	x.Free()
	if err := b.Close(); err == nil {
		t.Error("Close did not report the error")
	}
}

// BenchmarkSpMM measures SpMM on the 7- and 27-point Laplacians of
// (gpu.n/2)^3 rows for several column counts, in GB/s of its least traffic
// (the matrix once, X and Y once) and in device time per column
// (us-per-col), against which the time of one SpMV (k = 1) shows what
// reading A once for all columns saves.
func BenchmarkSpMM(b *testing.B) {
	be := openGPU(b)
	for _, pts := range []int{7, 27} {
		m := testmatrices.Stencil3D(*benchN/2, pts)
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			a, err := be.NewMatrix(m, nil, p)
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range []int{1, 2, 4, 8, 16, 32} {
				x, y := benchVec(b, be, m.Cols*k), benchVec(b, be, m.Rows*k)
				for _, c := range spmmPerLane {
					b.Run(fmt.Sprintf("%dpt/%v/k=%d/c=%d", pts, p, k, c), func(b *testing.B) {
						bytes := spmvBytes(m, p) + 8*(k-1)*(m.Cols+m.Rows)
						gbs := measure(b, be, bytes, func() { be.spmm(y, a, x, k, 0, nil, nil, c) })
						b.ReportMetric(float64(bytes)/gbs/1e3/float64(k), "us-per-col")
					})
				}
				x.Free()
				y.Free()
			}
			a.Free()
		}
	}
}

// BenchmarkBlockOps measures the block vector operations of a block PCG
// step on blocks of 2^21 rows, in GB/s of the arrays each reads and writes
// once.
func BenchmarkBlockOps(b *testing.B) {
	be := openGPU(b)
	const rows = 1 << 21
	for _, k := range []int{1, 4, 8, 16, 64} {
		n := rows * k
		x, r, p, q, z, d := benchVec(b, be, n), benchVec(b, be, n), benchVec(b, be, n), benchVec(b, be, n),
			benchVec(b, be, n), benchVec(b, be, rows)
		a, one, sums, sums2 := make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
		for c := range a {
			a[c], one[c] = 1e-3, 1
		}
		b.Run(fmt.Sprintf("DotCols/k=%d", k), func(b *testing.B) {
			measure(b, be, 16*n, func() { be.DotCols(x, r, sums) })
		})
		b.Run(fmt.Sprintf("AxpbyCols/k=%d", k), func(b *testing.B) {
			measure(b, be, 24*n, func() { be.AxpbyCols(p, a, z, one) })
		})
		b.Run(fmt.Sprintf("UpdateRZCols/k=%d", k), func(b *testing.B) {
			measure(b, be, 24*n+8*rows, func() { be.UpdateRZCols(r, a, q, d, sums, sums2) })
		})
		b.Run(fmt.Sprintf("UpdateXPCols/k=%d", k), func(b *testing.B) {
			measure(b, be, 40*n+8*rows, func() { be.UpdateXPCols(x, a, p, d, r, one) })
		})
		for _, v := range []backend.Vector{x, r, p, q, z, d} {
			v.Free()
		}
	}
}

// TestSpMMParts checks the size of a row's group: twice the SpMV width, but
// at least the column lanes and at most the warp.
func TestSpMMParts(t *testing.T) {
	for _, w := range spmvWidths {
		for logWC := 0; logWC <= 5; logWC++ {
			logP := spmmParts(w, logWC)
			group := 1 << (logWC + logP)
			want := min(max(2*w, 1<<logWC), 32)
			if logP < 0 || group != want {
				t.Errorf("width %d, %d column lanes: %d parts", w, 1<<logWC, 1<<logP)
			}
		}
	}
	if got := spmmParts(4, 1); got != 2 {
		t.Errorf("width 4, 2 column lanes: 2^%d parts, want 4", got)
	}
}

// TestSpMMShape: every chunk of 1 to 64 columns gets lanes that cover it
// (C*WC >= kc, at most 32 lanes, fewer than twice what it needs) with at
// least the columns per lane asked for.
func TestSpMMShape(t *testing.T) {
	for kc := 1; kc <= colChunk; kc++ {
		for _, ask := range append([]int{0}, spmmPerLane[:]...) {
			ci, logWC, _ := spmmShape(kc, 1, ask)
			c, wc := spmmPerLane[ci], 1<<logWC
			if c*wc < kc || wc > 32 || (wc > 1 && c*wc/2 >= kc) || c < ask {
				t.Errorf("kc %d, %d per lane asked: %d per lane, %d lanes", kc, ask, c, wc)
			}
		}
	}
}
