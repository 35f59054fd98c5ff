// CSR sparse matrix-vector product y = A*x (+ y), float64 vectors, values
// float64 or float32 (accumulated in float64).
//
// Miniwarp scheme: a group of W consecutive threads (W in 1,2,4,8,16,32, a
// divisor of the warp) owns one row; its lanes stride over the row's entries
// and the group sums them with shuffles limited to its own lanes. W = 1 is
// the plain one-thread-per-row kernel. Package gpu picks W from the mean
// number of entries per row. A non-null rowmap sends row k's result to
// y[rowmap[k]] (off-diagonal blocks store only their non-empty rows).

template <int W>
__device__ __forceinline__ unsigned fsai_group_mask()
{
    // The W lanes of this thread's group within its warp.
    return W == 32 ? 0xffffffffu
                   : ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(W - 1));
}

// Entries a thread of the one-thread-per-row product loads before it adds
// any of them: their loads (value, column, then x at the column) are in
// flight together instead of one entry's after the other's. The additions
// keep their order, so the sums are those of a loop over one entry at a
// time, bit for bit. Measured on an H200:
// aFSAI's G and G' 11-12% faster in float32, the 7-point Laplacian 256^3 4-6%;
// 8 entries were slower than 4. Groups of 2 or more lanes, which have that
// many loads in flight per row already, were slower with it. The product
// with the dot (fsai_spmv_dot), whose threads stride over rows, batches
// too: on an H100, float64 7-point Laplacian 256^3, it moves 0.76 of the
// copy bandwidth instead of 0.65 (PCG-Jacobi 10% faster per iteration); on
// an H200 0.86 either way (PCG-Jacobi within 2%).
#define FSAI_SPMV_BATCH 4

// fsai_spmv_row returns row of A*x in lane 0 of the row's group (the other
// lanes hold partial sums); with batch, a thread of a group of one loads
// FSAI_SPMV_BATCH entries at a time.
template <typename T, int W, bool batch>
__device__ __forceinline__ double fsai_spmv_row(long long row, const int *__restrict__ rowptr,
                                                const int *__restrict__ col,
                                                const T *__restrict__ val,
                                                const double *__restrict__ x)
{
    int lane = threadIdx.x & (W - 1);
    int lo = rowptr[row], hi = rowptr[row + 1];
    double s = 0.0;
    int k = lo + lane;
    if (batch && W == 1) {
        for (; k + FSAI_SPMV_BATCH <= hi; k += FSAI_SPMV_BATCH) {
            T v[FSAI_SPMV_BATCH];
            double xv[FSAI_SPMV_BATCH];
#pragma unroll
            for (int q = 0; q < FSAI_SPMV_BATCH; q++) {
                v[q] = val[k + q];
                xv[q] = __ldg(x + col[k + q]);
            }
#pragma unroll
            for (int q = 0; q < FSAI_SPMV_BATCH; q++)
                s += (double)v[q] * xv[q];
        }
    }
    for (; k < hi; k += W)
        s += (double)val[k] * __ldg(x + col[k]);
    if (W > 1) {
        unsigned mask = fsai_group_mask<W>();
        for (int off = W / 2; off > 0; off >>= 1)
            s += __shfl_down_sync(mask, s, off, W);
    }
    return s;
}

// fsai_spmv_store writes the row's sum s (lane 0 calls it) to y and returns
// the index it wrote.
__device__ __forceinline__ long long fsai_spmv_store(long long row, double s, double *__restrict__ y,
                                                     int accumulate, const int *__restrict__ rowmap)
{
    long long out = rowmap ? rowmap[row] : row;
    y[out] = accumulate ? y[out] + s : s;
    return out;
}

template <typename T, int W>
__device__ __forceinline__ void fsai_spmv(int nrows, const int *__restrict__ rowptr,
                                          const int *__restrict__ col,
                                          const T *__restrict__ val,
                                          const double *__restrict__ x,
                                          double *__restrict__ y, int accumulate,
                                          const int *__restrict__ rowmap)
{
    long long row = fsai_tid() / W;
    if (row >= nrows)
        return; // the whole group leaves together: row is the same on its lanes
    double s = fsai_spmv_row<T, W, true>(row, rowptr, col, val, x);
    if ((threadIdx.x & (W - 1)) == 0)
        fsai_spmv_store(row, s, y, accumulate, rowmap);
}

// fsai_spmv_dot is fsai_spmv that also adds w'(A*x), the dot product of w
// with the rows of the product it computes (not with what y held before), to
// *acc: PCG's p'Ap without a pass of its own over p and Ap. The grid strides
// over the rows, so that it is small enough for the grid-wide sum.
template <typename T, int W>
__device__ __forceinline__ void fsai_spmv_dot(int nrows, const int *__restrict__ rowptr,
                                              const int *__restrict__ col,
                                              const T *__restrict__ val,
                                              const double *__restrict__ x,
                                              double *__restrict__ y, int accumulate,
                                              const int *__restrict__ rowmap,
                                              const double *__restrict__ w, double *partials,
                                              unsigned *counter, double *acc)
{
    const long long groups = fsai_stride() / W;
    double d = 0.0;
    for (long long row = fsai_tid() / W; row < nrows; row += groups) {
        double s = fsai_spmv_row<T, W, true>(row, rowptr, col, val, x);
        if ((threadIdx.x & (W - 1)) == 0)
            d += w[fsai_spmv_store(row, s, y, accumulate, rowmap)] * s;
    }
    fsai_grid_add(d, partials, counter, acc);
}

#define FSAI_SPMV(name, T, W)                                                          \
    extern "C" __global__ void name(int nrows, const int *rowptr, const int *col,     \
                                    const T *val, const double *x, double *y,         \
                                    int accumulate, const int *rowmap)                \
    {                                                                                  \
        fsai_spmv<T, W>(nrows, rowptr, col, val, x, y, accumulate, rowmap);            \
    }                                                                                  \
    extern "C" __global__ void name##_dot(int nrows, const int *rowptr, const int *col, \
                                          const T *val, const double *x, double *y,   \
                                          int accumulate, const int *rowmap,          \
                                          const double *w, double *partials,          \
                                          unsigned *counter, double *acc)             \
    {                                                                                  \
        fsai_spmv_dot<T, W>(nrows, rowptr, col, val, x, y, accumulate, rowmap, w,      \
                            partials, counter, acc);                                   \
    }

FSAI_SPMV(spmv_d_w1, double, 1)
FSAI_SPMV(spmv_d_w2, double, 2)
FSAI_SPMV(spmv_d_w4, double, 4)
FSAI_SPMV(spmv_d_w8, double, 8)
FSAI_SPMV(spmv_d_w16, double, 16)
FSAI_SPMV(spmv_d_w32, double, 32)
FSAI_SPMV(spmv_s_w1, float, 1)
FSAI_SPMV(spmv_s_w2, float, 2)
FSAI_SPMV(spmv_s_w4, float, 4)
FSAI_SPMV(spmv_s_w8, float, 8)
FSAI_SPMV(spmv_s_w16, float, 16)
FSAI_SPMV(spmv_s_w32, float, 32)
