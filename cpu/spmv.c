#include "spmv.h"

// No fused multiply-adds, whatever -march the build passes: each product is
// rounded before its addition, as in Go on amd64.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

// AHEAD is how many entries ahead of the rows in hand the kernel asks the
// cache for the column indices and values. It asks only where four rows
// hold at most SHORT entries (stencils of up to 16 a row): there the
// hardware prefetcher alone reaches half the memory bandwidth, while long
// rows stream well without help, and the requests only slow their loads
// (81-entry rows of elasticity: 2.7x).
#define AHEAD 1024
#define SHORT 64

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

// The kernel for value type T. Each row's sum adds the row's products in
// the order of its entries, one row after another (the out-of-order core
// overlaps consecutive rows' chains of additions), four rows to a turn of
// the outer loop, which asks for the entries ahead. Four rows of equal
// length interleaved in one loop, four chains of additions by
// construction, ran 7% slower on 7-entry rows and 2.7x slower on
// 81-entry rows.
#define ROW(S, P, Q)                                                                           \
	for (int64_t e = P; e < Q; e++)                                                            \
		S += (double)val[e] * x[col[e]];
#define SPMV(NAME, T)                                                                          \
	double NAME(const int32_t *rowptr, const int32_t *col, const T *val,                       \
	            const int32_t *rowmap, const double *x, double beta, double *y,                \
	            const double *w, int64_t lo, int64_t hi) {                                     \
		double dot = 0;                                                                        \
		int64_t i = lo;                                                                        \
		for (; i + 4 <= hi; i += 4) {                                                          \
			const int64_t p0 = rowptr[i], p1 = rowptr[i + 1], p2 = rowptr[i + 2],              \
			              p3 = rowptr[i + 3], p4 = rowptr[i + 4];                              \
			if (p4 - p0 <= SHORT) {                                                            \
				__builtin_prefetch(col + p0 + AHEAD);                                          \
				__builtin_prefetch(col + p2 + AHEAD);                                          \
				__builtin_prefetch(val + p0 + AHEAD);                                          \
				__builtin_prefetch(val + p1 + AHEAD);                                          \
				__builtin_prefetch(val + p2 + AHEAD);                                          \
				__builtin_prefetch(val + p3 + AHEAD);                                          \
			}                                                                                  \
			double s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                             \
			ROW(s0, p0, p1)                                                                    \
			ROW(s1, p1, p2)                                                                    \
			ROW(s2, p2, p3)                                                                    \
			ROW(s3, p3, p4)                                                                    \
			finish(rowmap, beta, y, w, i, s0, &dot);                                           \
			finish(rowmap, beta, y, w, i + 1, s1, &dot);                                       \
			finish(rowmap, beta, y, w, i + 2, s2, &dot);                                       \
			finish(rowmap, beta, y, w, i + 3, s3, &dot);                                       \
		}                                                                                      \
		for (; i < hi; i++) {                                                                  \
			double s = 0;                                                                      \
			ROW(s, rowptr[i], rowptr[i + 1])                                                   \
			finish(rowmap, beta, y, w, i, s, &dot);                                            \
		}                                                                                      \
		return dot;                                                                            \
	}

SPMV(fsai_spmv_f64, double)
SPMV(fsai_spmv_f32, float)
