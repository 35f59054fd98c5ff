// CSR sparse matrix times a block of kc <= FSAI_COLS columns (several
// right-hand sides): Y = A*X (+ Y), row-major blocks of row stride ld (entry
// (j, c) of X at x[j*ld + c]; the pointers start at the first of the kc
// columns), float64 blocks, values float64 or float32 (accumulated in
// float64).
//
// A group of WC*P consecutive threads (a power of two, at most the warp)
// owns one row: its WC column lanes split the kc columns (lane l takes
// columns l, l + WC, ..., C of them, so kc <= C*WC), its P parts split the
// row's entries (part q takes entries q, q+P, ...). The WC lanes of a part
// read the same entry of A (one load, broadcast) and WC adjacent entries of
// row j of X (coalesced), so A is read once for all columns; a lane's C
// columns give it C independent loads per entry. The parts' sums are added
// by shuffles within the group in a fixed tree, and part 0 writes the row.
// Package gpu picks C, WC and P (spmmShape). A non-null rowmap sends row k
// to row rowmap[k] of Y, as in spmv.cu.

template <typename T, int C>
__device__ __forceinline__ void fsai_spmm(int nrows, const int *__restrict__ rowptr,
                                          const int *__restrict__ col, const T *__restrict__ val,
                                          const double *__restrict__ x, double *__restrict__ y,
                                          int ld, int kc, int log_wc, int log_p, int accumulate,
                                          const int *__restrict__ rowmap)
{
    const int log_w = log_wc + log_p, W = 1 << log_w, WC = 1 << log_wc, P = 1 << log_p;
    const long long row = fsai_tid() >> log_w;
    if (row >= nrows)
        return; // the whole group leaves together: row is the same on its lanes
    const int lane = threadIdx.x & (W - 1), cl = lane & (WC - 1), part = lane >> log_wc;
    const unsigned mask = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(W - 1));
    bool has[C];
    double s[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
        has[c] = cl + c * WC < kc;
        s[c] = 0.0;
    }
    const int lo = rowptr[row], hi = rowptr[row + 1];
    for (int e = lo + part; e < hi; e += P) {
        const double v = (double)val[e];
        const double *xj = x + (long long)col[e] * ld + cl;
#pragma unroll
        for (int c = 0; c < C; c++)
            if (has[c])
                s[c] += v * __ldg(xj + c * WC);
    }
    for (int off = W >> 1; off >= WC; off >>= 1) {
#pragma unroll
        for (int c = 0; c < C; c++)
            s[c] += __shfl_down_sync(mask, s[c], off, W);
    }
    if (part == 0) {
        double *yi = y + (rowmap ? (long long)rowmap[row] : row) * ld + cl;
#pragma unroll
        for (int c = 0; c < C; c++)
            if (has[c])
                yi[c * WC] = accumulate ? yi[c * WC] + s[c] : s[c];
    }
}

#define FSAI_SPMM(name, T, C)                                                               \
    extern "C" __global__ void name(int nrows, const int *rowptr, const int *col,          \
                                    const T *val, const double *x, double *y, int ld,      \
                                    int kc, int log_wc, int log_p, int accumulate,         \
                                    const int *rowmap)                                     \
    {                                                                                       \
        fsai_spmm<T, C>(nrows, rowptr, col, val, x, y, ld, kc, log_wc, log_p, accumulate,   \
                        rowmap);                                                            \
    }

FSAI_SPMM(spmm_d_c1, double, 1)
FSAI_SPMM(spmm_d_c2, double, 2)
FSAI_SPMM(spmm_s_c1, float, 1)
FSAI_SPMM(spmm_s_c2, float, 2)
