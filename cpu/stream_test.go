package cpu

import (
	"runtime"
	"testing"
)

// BenchmarkStream measures the memory bandwidth that GOMAXPROCS threads
// reach, as STREAM does, on float64 arrays of 2^24 entries (128 MiB each,
// far above the caches): copy (a = b, 16 bytes per entry) and triad
// (a = b + s*c, 24 bytes per entry). scripts/bench-cpu.sh runs it with
// -cpu 1,2 and gives each kernel's bandwidth as a fraction of copy's.
func BenchmarkStream(b *testing.B) {
	const n = 1 << 24
	be := New(runtime.GOMAXPROCS(0))
	x, y, z := make(Vector, n), make(Vector, n), make(Vector, n)
	// first touch by the threads that use each range (NUMA placement),
	// with values that differ from page to page (no page merged with another)
	be.parallel(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i], y[i], z[i] = 0, float64(i), float64(2*i)
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(16 * n)
		for b.Loop() {
			be.parallel(n, func(_, lo, hi int) { copy(x[lo:hi], y[lo:hi]) })
		}
	})
	b.Run("triad", func(b *testing.B) {
		b.SetBytes(24 * n)
		for b.Loop() {
			be.parallel(n, func(_, lo, hi int) {
				xs, ys, zs := x[lo:hi], y[lo:hi], z[lo:hi]
				ys, zs = ys[:len(xs)], zs[:len(xs)]
				for i := range xs {
					xs[i] = ys[i] + 3*zs[i]
				}
			})
		}
	})
}

// BenchmarkPCGSteps measures PCG's fused vector steps on vectors of 2^24
// entries with GOMAXPROCS threads, counting the bytes each moves as
// BenchmarkStream does: UpdateRZCols reads r, q and d and writes r (32
// bytes per entry), UpdateXPCols reads x, p, d and r and writes x and p
// (48 bytes per entry).
func BenchmarkPCGSteps(b *testing.B) {
	const n = 1 << 24
	be := New(runtime.GOMAXPROCS(0))
	x, p, r, q, d := make(Vector, n), make(Vector, n), make(Vector, n), make(Vector, n), make(Vector, n)
	be.parallel(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i], p[i], r[i], q[i], d[i] = 0, float64(i), float64(2*i), float64(3*i), 1/float64(i+1)
		}
	})
	rr, rz := make([]float64, 1), make([]float64, 1)
	b.Run("UpdateRZCols", func(b *testing.B) {
		b.SetBytes(32 * n)
		for b.Loop() {
			be.UpdateRZCols(r, []float64{1e-9}, q, d, rr, rz)
		}
	})
	b.Run("UpdateXPCols", func(b *testing.B) {
		b.SetBytes(48 * n)
		for b.Loop() {
			be.UpdateXPCols(x, []float64{1e-9}, p, d, r, []float64{0.5})
		}
	})
}
