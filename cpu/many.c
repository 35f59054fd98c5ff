#include "many.h"

// No fused multiply-adds, whatever -march the build passes: each product is
// rounded before its addition, as in Go on amd64.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// v2 is two doubles in one register (SSE2 on amd64, NEON on arm64), loaded
// and stored at any 8-byte alignment.
typedef double v2 __attribute__((vector_size(16), aligned(8)));

// dots adds v_c[t:t+len]'x to s[c] for the k vectors v_c (n entries apart)
// of v. Four vectors go at a time, each with four partial sums (entries
// i mod 4, in two registers), so that eight chains of additions are in
// flight where one per vector would wait on each addition's latency; a
// tile's sum is (p0+p1) + (p2+p3) + the tail's, added to s[c].
static void dots(double *s, const double *x, const double *v, int64_t n, int64_t t,
                 int64_t len, int64_t k) {
	const int64_t len4 = len & ~(int64_t)3;
	int64_t c = 0;
	for (; c < k; c += 4) {
		const int64_t g = k - c < 4 ? k - c : 4; // vectors in this group
		const double *p[4];
		for (int64_t j = 0; j < 4; j++)
			p[j] = v + (c + (j < g ? j : 0)) * n + t; // a short group repeats v_c
		v2 a0 = {0, 0}, a1 = {0, 0}, b0 = {0, 0}, b1 = {0, 0};
		v2 c0 = {0, 0}, c1 = {0, 0}, d0 = {0, 0}, d1 = {0, 0};
		for (int64_t i = 0; i < len4; i += 4) {
			const v2 x0 = *(const v2 *)(x + i), x1 = *(const v2 *)(x + i + 2);
			a0 += *(const v2 *)(p[0] + i) * x0;
			a1 += *(const v2 *)(p[0] + i + 2) * x1;
			b0 += *(const v2 *)(p[1] + i) * x0;
			b1 += *(const v2 *)(p[1] + i + 2) * x1;
			c0 += *(const v2 *)(p[2] + i) * x0;
			c1 += *(const v2 *)(p[2] + i + 2) * x1;
			d0 += *(const v2 *)(p[3] + i) * x0;
			d1 += *(const v2 *)(p[3] + i + 2) * x1;
		}
		double tail[4] = {0, 0, 0, 0};
		for (int64_t i = len4; i < len; i++)
			for (int64_t j = 0; j < 4; j++)
				tail[j] += p[j][i] * x[i];
		const double sum[4] = {(a0[0] + a0[1]) + (a1[0] + a1[1]) + tail[0],
		                       (b0[0] + b0[1]) + (b1[0] + b1[1]) + tail[1],
		                       (c0[0] + c0[1]) + (c1[0] + c1[1]) + tail[2],
		                       (d0[0] + d0[1]) + (d1[0] + d1[1]) + tail[3]};
		for (int64_t j = 0; j < g; j++)
			s[c + j] += sum[j];
	}
}

// axpys adds sum_c a[c]*v_c[t:t+len] to x for the k vectors v_c of v: four
// vectors at a time, each entry's terms added in the order of c, two
// entries per instruction: x + a0*v0 + a1*v1 + a2*v2 + a3*v3, rounded
// after each operation.
static void axpys(double *x, const double *v, int64_t n, int64_t t, int64_t len,
                  const double *a, int64_t k) {
	const int64_t len2 = len & ~(int64_t)1;
	int64_t c = 0;
	for (; c + 4 <= k; c += 4) {
		const double *p0 = v + c * n + t, *p1 = p0 + n, *p2 = p1 + n, *p3 = p2 + n;
		const v2 a0 = {a[c], a[c]}, a1 = {a[c + 1], a[c + 1]};
		const v2 a2 = {a[c + 2], a[c + 2]}, a3 = {a[c + 3], a[c + 3]};
		for (int64_t i = 0; i < len2; i += 2)
			*(v2 *)(x + i) = *(const v2 *)(x + i) + a0 * *(const v2 *)(p0 + i) +
			                 a1 * *(const v2 *)(p1 + i) + a2 * *(const v2 *)(p2 + i) +
			                 a3 * *(const v2 *)(p3 + i);
		for (int64_t i = len2; i < len; i++)
			x[i] = x[i] + a[c] * p0[i] + a[c + 1] * p1[i] + a[c + 2] * p2[i] + a[c + 3] * p3[i];
	}
	for (; c < k; c++) {
		const double *p = v + c * n + t;
		for (int64_t i = 0; i < len; i++)
			x[i] += a[c] * p[i];
	}
}

void fsai_dot_many(double *s, const double *w, const double *v, int64_t n, int64_t k,
                   int64_t lo, int64_t hi) {
	dots(s, w + lo, v, n, lo, hi - lo, k);
}

void fsai_axpy_many(double *w, const double *v, int64_t n, const double *a, int64_t k,
                    int64_t lo, int64_t hi) {
	axpys(w + lo, v, n, lo, hi - lo, a, k);
}

// fsai_axpy_dot_many is fsai_axpy_many then fsai_dot_many, tile by tile,
// and s[k] += w'w of the updated tile (even and odd entries summed apart,
// then together).
void fsai_axpy_dot_many(double *s, double *w, const double *v, int64_t n, const double *a,
                        int64_t k, int64_t lo, int64_t hi, int64_t tile) {
	for (int64_t t = lo; t < hi; t += tile) {
		const int64_t len = hi - t < tile ? hi - t : tile, len2 = len & ~(int64_t)1;
		double *x = w + t;
		axpys(x, v, n, t, len, a, k);
		dots(s, x, v, n, t, len, k);
		v2 d = {0, 0};
		for (int64_t i = 0; i < len2; i += 2) {
			const v2 xi = *(const v2 *)(x + i);
			d += xi * xi;
		}
		if (len2 < len)
			d[0] += x[len2] * x[len2];
		s[k] += d[0] + d[1];
	}
}
