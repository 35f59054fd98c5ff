// Block kernels (several right-hand sides) on row-major n x ld blocks: entry
// (i, c) at i*ld + c. One launch covers kc <= FSAI_COLS adjacent columns of
// the block (the vector pointers start at the first of them); package gpu
// splits wider blocks into such chunks.
//
// Threads: a block of FSAI_BLOCK threads forms R = FSAI_BLOCK / kc rows of kc
// lanes, thread t being column t % kc of block row t / kc (the threads past
// R*kc idle), and the grid strides over the block's rows R at a time. Each
// thread keeps its column, so its scalars and its sums are per column, and a
// block row reads kc adjacent entries (the whole row when kc == ld:
// coalesced).
//
// Per-column scalars travel by value in a kernel parameter (FsaiCols): the
// driver copies parameters at launch, so no buffer has to outlive the call.
// Per-column sums follow reduce.cu: a block sums its rows in a fixed tree,
// the last block adds the block sums in a fixed order, and the result goes
// straight into page-locked host memory. Deterministic for a given grid.

#define FSAI_COLS 64

struct FsaiCols {
    double v[FSAI_COLS];
};

// fsai_cols_rows is R, the block rows of a block of kc-column rows.
__device__ __forceinline__ int fsai_cols_rows(int kc)
{
    return FSAI_BLOCK / kc;
}

// fsai_cols_block_sum adds v over the block rows, column by column, in a
// fixed tree (row r takes row r + h while h halves, rounding up); thread c <
// kc returns the sum of column c. sh holds FSAI_BLOCK doubles. It starts with
// a barrier, so that it can be called again at once.
__device__ double fsai_cols_block_sum(double v, int kc, double *sh)
{
    const int t = threadIdx.x;
    __syncthreads();
    sh[t] = v;
    for (int w = fsai_cols_rows(kc); w > 1;) {
        const int h = (w + 1) >> 1;
        __syncthreads();
        if (t < (w - h) * kc) // rows [0, w-h) read rows [h, w): no overlap
            sh[t] += sh[t + h * kc];
        w = h;
    }
    __syncthreads();
    return sh[t];
}

// fsai_cols_grid_reduce_at is fsai_cols_grid_reduce with the sums of
// reduction s at result[s*stride + c]: each reduction's sums of a chunk of
// columns in place among those of the whole block (stride its columns).
__device__ void fsai_cols_grid_reduce_at(double v, double w, int kc, int nsum, int stride,
                                         double *partials, unsigned *counter, double *result,
                                         int add)
{
    __shared__ double sh[FSAI_BLOCK];
    const int t = threadIdx.x, R = fsai_cols_rows(kc), r = t / kc, c = t - r * kc;
    const unsigned G = gridDim.x;
    for (int s = 0; s < nsum; s++) {
        const double b = fsai_cols_block_sum(s == 0 ? v : w, kc, sh);
        if (t < kc)
            partials[(long long)(s * kc + c) * G + blockIdx.x] = b;
    }
    if (!fsai_last_block(counter))
        return;
    const volatile double *p = partials;
    for (int s = 0; s < nsum; s++) {
        double a = 0.0;
        if (r < R)
            for (unsigned g = r; g < G; g += R)
                a += p[(long long)(s * kc + c) * G + g];
        a = fsai_cols_block_sum(a, kc, sh);
        if (t < kc)
            result[s * stride + c] = add ? result[s * stride + c] + a : a;
    }
}

// fsai_cols_grid_reduce finishes nsum (1 or 2) per-column reductions: block
// g stores the sum of column c of reduction s in partials[(s*kc + c)*G + g]
// (G blocks); the last block to finish adds them in block order, each thread
// taking the blocks of its block row, and writes result[s*kc + c], or adds
// to it when add is set. *counter must be 0 before the launch; the last
// block wraps it back to 0 (fsai_last_block).
__device__ void fsai_cols_grid_reduce(double v, double w, int kc, int nsum, double *partials,
                                      unsigned *counter, double *result, int add)
{
    fsai_cols_grid_reduce_at(v, w, kc, nsum, kc, partials, counter, result, add);
}

// fsai_cols_grid_sum writes the nsum per-column sums of
// fsai_cols_grid_reduce to result.
__device__ void fsai_cols_grid_sum(double v, double w, int kc, int nsum, double *partials,
                                   unsigned *counter, double *result)
{
    fsai_cols_grid_reduce(v, w, kc, nsum, partials, counter, result, 0);
}

// y[:,c] = a[c]*x[:,c] + b[c]*y[:,c]; a column with b[c] == 0 does not read
// y (it may hold NaN), as in BLAS.
extern "C" __global__ void axpby_cols(const FsaiCols a, const FsaiCols b, long long n, int ld,
                                      int kc, const double *__restrict__ x, double *__restrict__ y)
{
    const int R = fsai_cols_rows(kc), r = threadIdx.x / kc, c = threadIdx.x - r * kc;
    if (r >= R)
        return;
    const double ac = a.v[c], bc = b.v[c];
    for (long long i = (long long)blockIdx.x * R + r; i < n; i += (long long)gridDim.x * R) {
        const long long e = i * ld + c;
        y[e] = bc == 0.0 ? ac * x[e] : ac * x[e] + bc * y[e];
    }
}

// z[i,c] = d[i]*r[i,c]: one diagonal scaling for every column.
extern "C" __global__ void mul_cols(long long n, int ld, int kc, const double *__restrict__ d,
                                    const double *__restrict__ r, double *__restrict__ z)
{
    const int R = fsai_cols_rows(kc), rr = threadIdx.x / kc, c = threadIdx.x - rr * kc;
    if (rr >= R)
        return;
    for (long long i = (long long)blockIdx.x * R + rr; i < n; i += (long long)gridDim.x * R) {
        const long long e = i * ld + c;
        z[e] = d[i] * r[e];
    }
}

// result[c] = x[:,c]'y[:,c].
extern "C" __global__ void dot_cols(long long n, int ld, int kc, const double *__restrict__ x,
                                    const double *__restrict__ y, double *partials,
                                    unsigned *counter, double *result)
{
    const int R = fsai_cols_rows(kc), r = threadIdx.x / kc, c = threadIdx.x - r * kc;
    double s = 0.0;
    if (r < R)
        for (long long i = (long long)blockIdx.x * R + r; i < n; i += (long long)gridDim.x * R) {
            const long long e = i * ld + c;
            s += x[e] * y[e];
        }
    fsai_cols_grid_sum(s, 0.0, kc, 1, partials, counter, result);
}

// w[i] += sum_c a[c]*v_c[i] over the kc vectors v_c of n entries that
// follow one another in v (the transpose of gramschmidt.cu's dots): one thread per entry,
// adding the terms in the order of c, reading and writing w once.
extern "C" __global__ void axpy_many(const FsaiCols a, long long n, int kc,
                                     const double *__restrict__ v, double *__restrict__ w)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double s = w[i];
        for (int c = 0; c < kc; c++)
            s += a.v[c] * v[(long long)c * n + i];
        w[i] = s;
    }
}

// result[c] = x[:,c]'y[:,c] and result[stride + c] = x[:,c]'z[:,c],
// reading x once; added to result when add is set (stride kc: the sums of
// DotPairCols; stride ld, added: those of a Sum, single-reduction CG's r'u
// and r'r).
extern "C" __global__ void dot_pair_cols(long long n, int ld, int kc, int stride, int add,
                                         const double *__restrict__ x,
                                         const double *__restrict__ y,
                                         const double *__restrict__ z, double *partials,
                                         unsigned *counter, double *result)
{
    const int R = fsai_cols_rows(kc), r = threadIdx.x / kc, c = threadIdx.x - r * kc;
    double sy = 0.0, sz = 0.0;
    if (r < R)
        for (long long i = (long long)blockIdx.x * R + r; i < n; i += (long long)gridDim.x * R) {
            const long long e = i * ld + c;
            const double xe = x[e];
            sy += xe * y[e];
            sz += xe * z[e];
        }
    fsai_cols_grid_reduce_at(sy, sz, kc, 2, stride, partials, counter, result, add);
}

// r[:,c] -= a[c]*q[:,c]; result[c] = r'r and result[kc + c] = r'(d .* r) of
// column c after it (update_rz per column, one diagonal d for every column).
extern "C" __global__ void update_rz_cols(const FsaiCols a, long long n, int ld, int kc,
                                          double *__restrict__ r, const double *__restrict__ q,
                                          const double *__restrict__ d, double *partials,
                                          unsigned *counter, double *result)
{
    const int R = fsai_cols_rows(kc), row = threadIdx.x / kc, c = threadIdx.x - row * kc;
    double rr = 0.0, rz = 0.0;
    if (row < R) {
        const double ac = a.v[c];
        for (long long i = (long long)blockIdx.x * R + row; i < n; i += (long long)gridDim.x * R) {
            const long long e = i * ld + c;
            const double r0 = r[e] - ac * q[e], rd = r0 * r0;
            r[e] = r0;
            rr += rd;
            rz += d[i] * rd;
        }
    }
    fsai_cols_grid_sum(rr, rz, kc, 2, partials, counter, result);
}

// x[:,c] += a[c]*p[:,c]; p[:,c] = z[:,c] + b[c]*p[:,c] with z[i,c] =
// d[i]*r[i,c], or z = r when d is null (update_xp per column).
extern "C" __global__ void update_xp_cols(const FsaiCols a, const FsaiCols b, long long n, int ld,
                                          int kc, double *__restrict__ x, double *__restrict__ p,
                                          const double *__restrict__ d,
                                          const double *__restrict__ r)
{
    const int R = fsai_cols_rows(kc), row = threadIdx.x / kc, c = threadIdx.x - row * kc;
    if (row >= R)
        return;
    const double ac = a.v[c], bc = b.v[c];
    for (long long i = (long long)blockIdx.x * R + row; i < n; i += (long long)gridDim.x * R) {
        const long long e = i * ld + c;
        const double p0 = p[e], z0 = d ? d[i] * r[e] : r[e];
        x[e] += ac * p0;
        p[e] = z0 + bc * p0;
    }
}
