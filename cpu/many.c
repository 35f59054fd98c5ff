#include "many.h"

// No fused multiply-adds, whatever -march the build passes: each product is
// rounded before its addition, as in Go on amd64.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// v4 is four doubles, loaded and stored at any 8-byte alignment: one AVX2
// register, or two SSE2 (amd64 without AVX2) or NEON (arm64) ones.
typedef double v4 __attribute__((vector_size(32), aligned(8)));

// CLONES compiles a kernel twice on amd64 with GCC or Clang, for AVX2 and
// for the baseline, the loader picking the one the CPU runs: the same
// operations in the same order, so the same bits either way.
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

// The helpers are inlined into each clone of the kernels.
#define INLINE static inline __attribute__((always_inline))

// dots adds v_c[t:t+len]'x to s[c] for the k vectors v_c (n entries apart)
// of v. Four vectors go at a time, each with four partial sums (entries
// i mod 4, one register), so that four chains of additions are in flight,
// each four entries wide, where one sum per vector would wait on each
// addition's latency; a tile's sum is (p0+p1) + (p2+p3) + the tail's,
// added to s[c].
INLINE void dots(double *s, const double *x, const double *v, int64_t n, int64_t t, int64_t len,
                 int64_t k) {
	const int64_t len4 = len & ~(int64_t)3;
	for (int64_t c = 0; c < k; c += 4) {
		const int64_t g = k - c < 4 ? k - c : 4; // vectors in this group
		const double *p[4];
		for (int64_t j = 0; j < 4; j++)
			p[j] = v + (c + (j < g ? j : 0)) * n + t; // a short group repeats v_c
		v4 a = {0, 0, 0, 0}, b = a, d = a, e = a;
		for (int64_t i = 0; i < len4; i += 4) {
			const v4 xi = *(const v4 *)(x + i);
			a += *(const v4 *)(p[0] + i) * xi;
			b += *(const v4 *)(p[1] + i) * xi;
			d += *(const v4 *)(p[2] + i) * xi;
			e += *(const v4 *)(p[3] + i) * xi;
		}
		double tail[4] = {0, 0, 0, 0};
		for (int64_t i = len4; i < len; i++)
			for (int64_t j = 0; j < 4; j++)
				tail[j] += p[j][i] * x[i];
		const double sum[4] = {(a[0] + a[1]) + (a[2] + a[3]) + tail[0],
		                       (b[0] + b[1]) + (b[2] + b[3]) + tail[1],
		                       (d[0] + d[1]) + (d[2] + d[3]) + tail[2],
		                       (e[0] + e[1]) + (e[2] + e[3]) + tail[3]};
		for (int64_t j = 0; j < g; j++)
			s[c + j] += sum[j];
	}
}

// axpys adds sum_c a[c]*v_c[t:t+len] to x for the k vectors v_c of v: four
// vectors at a time, each entry's terms added in the order of c, four
// entries per instruction: x + a0*v0 + a1*v1 + a2*v2 + a3*v3, rounded
// after each operation.
INLINE void axpys(double *x, const double *v, int64_t n, int64_t t, int64_t len, const double *a,
                  int64_t k) {
	const int64_t len4 = len & ~(int64_t)3;
	int64_t c = 0;
	for (; c + 4 <= k; c += 4) {
		const double *p0 = v + c * n + t, *p1 = p0 + n, *p2 = p1 + n, *p3 = p2 + n;
		const v4 a0 = {a[c], a[c], a[c], a[c]}, a1 = {a[c + 1], a[c + 1], a[c + 1], a[c + 1]};
		const v4 a2 = {a[c + 2], a[c + 2], a[c + 2], a[c + 2]};
		const v4 a3 = {a[c + 3], a[c + 3], a[c + 3], a[c + 3]};
		for (int64_t i = 0; i < len4; i += 4)
			*(v4 *)(x + i) = *(const v4 *)(x + i) + a0 * *(const v4 *)(p0 + i) +
			                 a1 * *(const v4 *)(p1 + i) + a2 * *(const v4 *)(p2 + i) +
			                 a3 * *(const v4 *)(p3 + i);
		for (int64_t i = len4; i < len; i++)
			x[i] = x[i] + a[c] * p0[i] + a[c + 1] * p1[i] + a[c + 2] * p2[i] + a[c + 3] * p3[i];
	}
	for (; c < k; c++) {
		const double *p = v + c * n + t;
		for (int64_t i = 0; i < len; i++)
			x[i] += a[c] * p[i];
	}
}

CLONES void fsai_dot_many(double *s, const double *w, const double *v, int64_t n, int64_t k,
                          int64_t lo, int64_t hi) {
	dots(s, w + lo, v, n, lo, hi - lo, k);
}

CLONES void fsai_axpy_many(double *w, const double *v, int64_t n, const double *a, int64_t k,
                           int64_t lo, int64_t hi) {
	axpys(w + lo, v, n, lo, hi - lo, a, k);
}

// fsai_axpy_dot_many is fsai_axpy_many then fsai_dot_many, tile by tile,
// and s[k] += w'w of the updated tile, summed as dots sums.
CLONES void fsai_axpy_dot_many(double *s, double *w, const double *v, int64_t n, const double *a,
                               int64_t k, int64_t lo, int64_t hi, int64_t tile) {
	for (int64_t t = lo; t < hi; t += tile) {
		const int64_t len = hi - t < tile ? hi - t : tile, len4 = len & ~(int64_t)3;
		double *x = w + t;
		axpys(x, v, n, t, len, a, k);
		dots(s, x, v, n, t, len, k);
		v4 d = {0, 0, 0, 0};
		for (int64_t i = 0; i < len4; i += 4) {
			const v4 xi = *(const v4 *)(x + i);
			d += xi * xi;
		}
		double tail = 0;
		for (int64_t i = len4; i < len; i++)
			tail += x[i] * x[i];
		s[k] += (d[0] + d[1]) + (d[2] + d[3]) + tail;
	}
}
