package cpu

// #cgo CFLAGS: -O3
// #include "many.h"
import "C"

import "unsafe"

// dotTile is the entries of w in one tile of AxpyDotMany: 16 KiB of each
// vector, so that the stretches of 30 vectors (480 KiB) stay in the L2
// cache between the tile's update and its dots. BenchmarkGramSchmidt's
// AxpyDotMany (30 vectors of 262144 entries, one thread, a shared 2-core
// AMD EPYC with AVX2) for tiles of 512, 1024, 2048, 4096, 8192, 16384 and
// 32768 entries: 2.7, 2.7, 2.4 to 2.6, 2.8 to 2.9, 3.0, 3.1 and 3.3 ms,
// against 1.5 for DotMany over the whole range, which it therefore takes,
// as AxpyMany does.
const dotTile = 2048

// The wrappers below call the C kernels of many.c on entries [lo, hi) of
// w and of each vector of w's length in v.

// dotMany adds v_c[lo:hi]'w[lo:hi] to s[c] for c < len(s).
func dotMany(s, w []float64, v Vector, lo, hi int) {
	C.fsai_dot_many(cf(s), cf(w), cf(v), C.int64_t(len(w)), C.int64_t(len(s)), C.int64_t(lo), C.int64_t(hi))
}

// axpyMany adds sum_c a[c]*v_c[lo:hi] to w[lo:hi].
func axpyMany(w []float64, v Vector, a []float64, lo, hi int) {
	C.fsai_axpy_many(cf(w), cf(v), C.int64_t(len(w)), cf(a), C.int64_t(len(a)), C.int64_t(lo), C.int64_t(hi))
}

// axpyDotMany is axpyMany, then dotMany with the updated w and
// s[len(a)] += w[lo:hi]'w[lo:hi], tile by tile.
func axpyDotMany(s, w []float64, v Vector, a []float64, lo, hi int) {
	C.fsai_axpy_dot_many(cf(s), cf(w), cf(v), C.int64_t(len(w)), cf(a), C.int64_t(len(a)),
		C.int64_t(lo), C.int64_t(hi), dotTile)
}

// cf is x's first entry as a C pointer, nil for an empty x.
func cf(x []float64) *C.double {
	if len(x) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&x[0]))
}
