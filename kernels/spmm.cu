// CSR sparse matrix times a block of kc <= FSAI_COLS columns (several
// right-hand sides): Y = A*X (+ Y), row-major blocks of row stride ld (entry
// (j, c) of X at x[j*ld + c]; the pointers start at the first of the kc
// columns), float64 blocks, values float64 or float32 (accumulated in
// float64).
//
// A group of WC*P consecutive threads (a power of two, at most the warp)
// owns one row: its WC column lanes split the kc columns (lane l takes
// columns l and l + WC, so kc <= 2*WC), its P parts split the row's entries
// (part q takes entries q, q+P, ...). The WC lanes of a part read the same
// entry of A (one load, broadcast) and WC adjacent entries of row j of X
// (coalesced), so A is read once for all columns. The parts' sums are added
// by shuffles within the group in a fixed tree, and part 0 writes the row.
// Package gpu picks WC, the power of two at or above kc (at most 32), and P
// from the matrix's SpMV width (spmmParts). A non-null rowmap sends row k to
// row rowmap[k] of Y, as in spmv.cu.

template <typename T>
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
    const bool has0 = cl < kc, has1 = cl + WC < kc;
    const int lo = rowptr[row], hi = rowptr[row + 1];
    double s0 = 0.0, s1 = 0.0;
    for (int e = lo + part; e < hi; e += P) {
        const double v = (double)val[e];
        const double *xj = x + (long long)col[e] * ld + cl;
        if (has0)
            s0 += v * __ldg(xj);
        if (has1)
            s1 += v * __ldg(xj + WC);
    }
    for (int off = W >> 1; off >= WC; off >>= 1) {
        s0 += __shfl_down_sync(mask, s0, off, W);
        s1 += __shfl_down_sync(mask, s1, off, W);
    }
    if (part == 0) {
        double *yi = y + (rowmap ? (long long)rowmap[row] : row) * ld + cl;
        if (has0)
            yi[0] = accumulate ? yi[0] + s0 : s0;
        if (has1)
            yi[WC] = accumulate ? yi[WC] + s1 : s1;
    }
}

#define FSAI_SPMM(name, T)                                                                  \
    extern "C" __global__ void name(int nrows, const int *rowptr, const int *col,          \
                                    const T *val, const double *x, double *y, int ld,      \
                                    int kc, int log_wc, int log_p, int accumulate,         \
                                    const int *rowmap)                                     \
    {                                                                                       \
        fsai_spmm<T>(nrows, rowptr, col, val, x, y, ld, kc, log_wc, log_p, accumulate,      \
                     rowmap);                                                               \
    }

FSAI_SPMM(spmm_d, double)
FSAI_SPMM(spmm_s, float)
