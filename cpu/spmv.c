#include "spmv.h"

// No fused multiply-adds, whatever -march the build passes: each product is
// rounded before its addition, as in Go on amd64.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

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

// The kernel for value type T: rows in groups of four share a loop over the
// shortest row's length, then each row adds its remaining entries.
#define SPMV(NAME, T)                                                                         \
	double NAME(const int32_t *rowptr, const int32_t *col, const T *val,                      \
	            const int32_t *rowmap, const double *x, double beta, double *y,               \
	            const double *w, int64_t lo, int64_t hi) {                                    \
		double dot = 0;                                                                       \
		int64_t i = lo;                                                                       \
		for (; i + 4 <= hi; i += 4) {                                                         \
			const int64_t p0 = rowptr[i], p1 = rowptr[i + 1], p2 = rowptr[i + 2],             \
			              p3 = rowptr[i + 3], p4 = rowptr[i + 4];                             \
			const int32_t *c0 = col + p0, *c1 = col + p1, *c2 = col + p2, *c3 = col + p3;     \
			const T *v0 = val + p0, *v1 = val + p1, *v2 = val + p2, *v3 = val + p3;           \
			const int64_t n0 = p1 - p0, n1 = p2 - p1, n2 = p3 - p2, n3 = p4 - p3;             \
			int64_t n = n0 < n1 ? n0 : n1;                                                    \
			n = n < n2 ? n : n2;                                                              \
			n = n < n3 ? n : n3;                                                              \
			double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                            \
			int64_t k = 0;                                                                    \
			for (; k < n; k++) {                                                              \
				s0 += (double)v0[k] * x[c0[k]];                                               \
				s1 += (double)v1[k] * x[c1[k]];                                               \
				s2 += (double)v2[k] * x[c2[k]];                                               \
				s3 += (double)v3[k] * x[c3[k]];                                               \
			}                                                                                 \
			for (int64_t e = k; e < n0; e++)                                                  \
				s0 += (double)v0[e] * x[c0[e]];                                               \
			for (int64_t e = k; e < n1; e++)                                                  \
				s1 += (double)v1[e] * x[c1[e]];                                               \
			for (int64_t e = k; e < n2; e++)                                                  \
				s2 += (double)v2[e] * x[c2[e]];                                               \
			for (int64_t e = k; e < n3; e++)                                                  \
				s3 += (double)v3[e] * x[c3[e]];                                               \
			finish(rowmap, beta, y, w, i, s0, &dot);                                          \
			finish(rowmap, beta, y, w, i + 1, s1, &dot);                                      \
			finish(rowmap, beta, y, w, i + 2, s2, &dot);                                      \
			finish(rowmap, beta, y, w, i + 3, s3, &dot);                                      \
		}                                                                                     \
		for (; i < hi; i++) {                                                                 \
			double s = 0;                                                                     \
			for (int64_t e = rowptr[i]; e < rowptr[i + 1]; e++)                               \
				s += (double)val[e] * x[col[e]];                                              \
			finish(rowmap, beta, y, w, i, s, &dot);                                           \
		}                                                                                     \
		return dot;                                                                           \
	}

SPMV(fsai_spmv_f64, double)
SPMV(fsai_spmv_f32, float)
