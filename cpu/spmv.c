#include "spmv.h"

// No fused multiply-adds, whatever -march the build passes: each product is
// rounded before its addition, as in Go on amd64.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// AHEAD is how many entries ahead of the rows in hand the kernel asks the
// cache for the column indices and values: with the hardware prefetcher
// alone the product reaches half the memory bandwidth.
#define AHEAD 1024

// finish stores row i's sum s at y[out] (out = rowmap[i], or i without a
// row map), adding beta*y[out] when beta != 0, and adds w[out]*s to *dot
// when w is not NULL: the order of spmvRows.
static inline void finish(const int32_t *rowmap, double beta, double *y, const double *w,
                          int64_t i, double s, double *dot) {
	int64_t out = rowmap ? rowmap[i] : i;
	if (w)
		*dot += w[out] * s;
	if (beta != 0)
		s += beta * y[out];
	y[out] = s;
}

// The kernel for value type T. Rows go four at a time: four rows of equal
// length (most rows of a stencil matrix) share one loop, one chain of
// additions per row in flight, with the entries at fixed offsets from the
// first row's; others add row by row.
#define SPMV(NAME, T)                                                                          \
	double NAME(const int32_t *rowptr, const int32_t *col, const T *val,                       \
	            const int32_t *rowmap, const double *x, double beta, double *y,                \
	            const double *w, int64_t lo, int64_t hi) {                                     \
		double dot = 0;                                                                        \
		int64_t i = lo;                                                                        \
		for (; i + 4 <= hi; i += 4) {                                                          \
			const int64_t p0 = rowptr[i], p1 = rowptr[i + 1], p2 = rowptr[i + 2],              \
			              p3 = rowptr[i + 3], p4 = rowptr[i + 4];                              \
			__builtin_prefetch(col + p0 + AHEAD);                                              \
			__builtin_prefetch(col + p2 + AHEAD);                                              \
			__builtin_prefetch(val + p0 + AHEAD);                                              \
			__builtin_prefetch(val + p1 + AHEAD);                                              \
			__builtin_prefetch(val + p2 + AHEAD);                                              \
			__builtin_prefetch(val + p3 + AHEAD);                                              \
			const int64_t n = p1 - p0;                                                         \
			double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                             \
			if (p2 - p1 == n && p3 - p2 == n && p4 - p3 == n) {                                \
				const int32_t *c = col + p0;                                                   \
				const T *v = val + p0;                                                         \
				for (int64_t k = 0; k < n; k++) {                                              \
					s0 += (double)v[k] * x[c[k]];                                              \
					s1 += (double)v[k + n] * x[c[k + n]];                                      \
					s2 += (double)v[k + 2 * n] * x[c[k + 2 * n]];                              \
					s3 += (double)v[k + 3 * n] * x[c[k + 3 * n]];                              \
				}                                                                              \
			} else {                                                                                \
				for (int64_t e = p0; e < p1; e++)                                                      \
					s0 += (double)val[e] * x[col[e]];                                                     \
				for (int64_t e = p1; e < p2; e++)                                                      \
					s1 += (double)val[e] * x[col[e]];                                                     \
				for (int64_t e = p2; e < p3; e++)                                                      \
					s2 += (double)val[e] * x[col[e]];                                                     \
				for (int64_t e = p3; e < p4; e++)                                                      \
					s3 += (double)val[e] * x[col[e]];                                                     \
			}                                                                                       \
			finish(rowmap, beta, y, w, i, s0, &dot);                                           \
			finish(rowmap, beta, y, w, i + 1, s1, &dot);                                       \
			finish(rowmap, beta, y, w, i + 2, s2, &dot);                                       \
			finish(rowmap, beta, y, w, i + 3, s3, &dot);                                       \
		}                                                                                      \
		for (; i < hi; i++) {                                                                  \
			double s = 0;                                                                      \
			for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)                                \
				s += (double)val[e] * x[col[e]];                                               \
			finish(rowmap, beta, y, w, i, s, &dot);                                            \
		}                                                                                      \
		return dot;                                                                            \
	}

SPMV(fsai_spmv_f64, double)
SPMV(fsai_spmv_f32, float)
