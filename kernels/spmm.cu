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

// fsai_spmm_dots adds, for each of the kc columns, the block's d (lane
// cl + c*WC's sum of column cl + c*WC, on the lanes of part 0, zero on the
// others) to acc[column] through fsai_cols_grid_reduce: warps add their
// groups by shuffles, then the block its warps, in fixed trees.
template <int C>
__device__ __forceinline__ void fsai_spmm_dots(const double (&d)[C], int kc, int log_wc, int log_w,
                                               double *partials, unsigned *counter, double *acc)
{
    __shared__ double warps[FSAI_BLOCK / 32][FSAI_COLS];
    const int WC = 1 << log_wc, warp = threadIdx.x >> 5, wl = threadIdx.x & 31;
#pragma unroll
    for (int c = 0; c < C; c++) {
        double v = d[c];
        for (int off = 16; off >= (1 << log_w); off >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, off);
        if (wl < WC && wl + c * WC < kc) // lane wl of the warp's first group is column lane wl of part 0
            warps[warp][wl + c * WC] = v;
    }
    __syncthreads();
    const int R = fsai_cols_rows(kc), r = threadIdx.x / kc, j = threadIdx.x - r * kc;
    double v = 0.0;
    if (r < R)
        for (int q = r; q < FSAI_BLOCK / 32; q += R)
            v += warps[q][j];
    fsai_cols_grid_reduce(v, 0.0, kc, 1, partials, counter, acc, 1);
}

// fsai_spmm computes the product; with DOT it also adds w[:,c]'(A*X)[:,c]
// (w indexed like y, the dot product with the rows of the product, not with
// what y held before) to acc[c] for the kc columns: PCG's p'Ap of every
// column without a pass of its own. The DOT grid strides over the rows (one
// wave of blocks, which the grid-wide sum has room for) and every thread
// reaches the sum; without DOT a group computes one row.
template <typename T, int C, bool DOT>
__device__ __forceinline__ void fsai_spmm(int nrows, const int *__restrict__ rowptr,
                                          const int *__restrict__ col, const T *__restrict__ val,
                                          const double *__restrict__ x, double *__restrict__ y,
                                          int ld, int kc, int log_wc, int log_p, int accumulate,
                                          const int *__restrict__ rowmap, const double *__restrict__ w,
                                          double *partials, unsigned *counter, double *acc)
{
    const int log_w = log_wc + log_p, W = 1 << log_w, WC = 1 << log_wc, P = 1 << log_p;
    const int lane = threadIdx.x & (W - 1), cl = lane & (WC - 1), part = lane >> log_wc;
    const unsigned mask = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(W - 1));
    bool has[C];
    double d[C];
#pragma unroll
    for (int c = 0; c < C; c++) {
        has[c] = cl + c * WC < kc;
        d[c] = 0.0;
    }
    // every lane of a group takes the same rows
    const long long step = DOT ? fsai_stride() >> log_w : nrows;
    for (long long row = fsai_tid() >> log_w; row < nrows; row += step) {
        double s[C];
#pragma unroll
        for (int c = 0; c < C; c++)
            s[c] = 0.0;
        const int lo = rowptr[row], hi = rowptr[row + 1];
        int e = lo + part;
        // Two of the part's entries are loaded before they are added, in
        // order (as in spmv.cu): the same sums. Measured on an H200
        // (BenchmarkSpMM): one column per lane 2-33%
        // faster, two per lane in float64 4-21%; two per lane in float32 and
        // the product with the dot were not faster, and keep one at a time.
        if (!DOT && (C == 1 || sizeof(T) == sizeof(double))) {
            for (; e + P < hi; e += 2 * P) {
                const double v0 = (double)val[e], v1 = (double)val[e + P];
                const double *x0 = x + (long long)col[e] * ld + cl, *x1 = x + (long long)col[e + P] * ld + cl;
                double a0[C], a1[C];
#pragma unroll
                for (int c = 0; c < C; c++) {
                    a0[c] = has[c] ? __ldg(x0 + c * WC) : 0.0;
                    a1[c] = has[c] ? __ldg(x1 + c * WC) : 0.0;
                }
#pragma unroll
                for (int c = 0; c < C; c++)
                    if (has[c]) {
                        s[c] += v0 * a0[c];
                        s[c] += v1 * a1[c];
                    }
            }
        }
        for (; e < hi; e += P) {
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
            const long long out = (rowmap ? (long long)rowmap[row] : row) * ld + cl;
#pragma unroll
            for (int c = 0; c < C; c++)
                if (has[c]) {
                    const long long e = out + c * WC;
                    y[e] = accumulate ? y[e] + s[c] : s[c];
                    if (DOT)
                        d[c] += w[e] * s[c];
                }
        }
    }
    if (DOT)
        fsai_spmm_dots<C>(d, kc, log_wc, log_w, partials, counter, acc);
}

#define FSAI_SPMM(name, T, C)                                                                  \
    extern "C" __global__ void name(int nrows, const int *rowptr, const int *col,             \
                                    const T *val, const double *x, double *y, int ld,         \
                                    int kc, int log_wc, int log_p, int accumulate,            \
                                    const int *rowmap)                                        \
    {                                                                                          \
        fsai_spmm<T, C, false>(nrows, rowptr, col, val, x, y, ld, kc, log_wc, log_p,           \
                               accumulate, rowmap, nullptr, nullptr, nullptr, nullptr);        \
    }                                                                                          \
    extern "C" __global__ void name##_dot(int nrows, const int *rowptr, const int *col,       \
                                          const T *val, const double *x, double *y, int ld,   \
                                          int kc, int log_wc, int log_p, int accumulate,      \
                                          const int *rowmap, const double *w,                 \
                                          double *partials, unsigned *counter, double *acc)   \
    {                                                                                          \
        fsai_spmm<T, C, true>(nrows, rowptr, col, val, x, y, ld, kc, log_wc, log_p,            \
                              accumulate, rowmap, w, partials, counter, acc);                 \
    }

FSAI_SPMM(spmm_d_c1, double, 1)
FSAI_SPMM(spmm_d_c2, double, 2)
FSAI_SPMM(spmm_s_c1, float, 1)
FSAI_SPMM(spmm_s_c2, float, 2)
