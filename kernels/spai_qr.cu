// Batched least squares of the SPAI set-up (spai/cudaspai): min ||C x - b||_2
// for a batch of dense blocks C (m x n, column-major, one after the other)
// by Householder QR and back-substitution, one thread block per problem.
// The operations are those of the host (spai/rows.go: worker.solve), in
// the same order, with products and sums rounded one by one (__dmul_rn,
// __dadd_rn: no fused multiply-add), so a row comes out as the host
// computes it. Thread j updates column j with each reflection (thread n
// the right-hand side); thread 0 forms the reflections and back-substitutes.

// spai_norm is the 2-norm of x[0:len] as the host's norm computes it: the
// plain sum of squares, or scaled by the largest magnitude where that sum
// could overflow or lose digits to underflow.
__device__ double spai_norm(const double *x, int len)
{
    double s = 0;
    for (int i = 0; i < len; i++)
        s = __dadd_rn(s, __dmul_rn(x[i], x[i]));
    if (s > ldexp(1.0, -900) && s < ldexp(1.0, 900))
        return sqrt(s);
    double big = 0;
    for (int i = 0; i < len; i++)
        big = fmax(big, fabs(x[i]));
    if (big == 0 || isinf(big))
        return big;
    s = 0;
    for (int i = 0; i < len; i++) {
        const double t = x[i] / big;
        s = __dadd_rn(s, __dmul_rn(t, t));
    }
    return __dmul_rn(big, sqrt(s));
}

// spai_reflect applies y -= v (v'y) / h to y[0:len].
__device__ void spai_reflect(double *y, const double *v, int len, double h)
{
    double d = 0;
    for (int i = 0; i < len; i++)
        d = __dadd_rn(d, __dmul_rn(v[i], y[i]));
    d /= h;
    for (int i = 0; i < len; i++)
        y[i] = __dadd_rn(y[i], -__dmul_rn(d, v[i]));
}

// spai_qr solves the nprob problems: block p is rows[p] x cols[p] from
// c + coff[p], its right-hand side rows[p] entries from b + boff[p], where
// the solution's cols[p] entries are left. bad[p] is set to 1 where the
// block's columns are dependent (as on the host: a column whose part
// orthogonal to those before it is below 2^-52 of its own norm, or more
// columns than rows), else 0. Dynamic shared memory: 2 maxn + 1 doubles,
// maxn the most columns of a block.
extern "C" __global__ void spai_qr(int nprob, const long long *coff, const long long *boff, const int *rows,
                                   const int *cols, double *c, double *b, int *bad)
{
    extern __shared__ double spai_shared[];
    __shared__ int fail;
    for (int p = blockIdx.x; p < nprob; p += gridDim.x) {
        const int m = rows[p], n = cols[p];
        double *a = c + coff[p], *rhs = b + boff[p];
        double *norms = spai_shared, *rdiag = spai_shared + n, *h = spai_shared + 2 * n;
        if (threadIdx.x == 0)
            fail = n > m;
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            norms[j] = spai_norm(a + (long long)j * m, m);
        __syncthreads();
        for (int k = 0; k < n; k++) {
            double *v = a + (long long)k * m + k;
            if (threadIdx.x == 0 && !fail) {
                const double s = spai_norm(v, m - k);
                if (!(s > __dmul_rn(ldexp(1.0, -52), norms[k]))) {
                    fail = 1;
                } else {
                    const double alpha = -copysign(s, v[0]);
                    h[0] = __dmul_rn(s, __dadd_rn(s, fabs(v[0])));
                    v[0] = __dadd_rn(v[0], -alpha);
                    rdiag[k] = alpha;
                }
            }
            __syncthreads();
            if (fail)
                break;
            for (int j = k + 1 + threadIdx.x; j <= n; j += blockDim.x) {
                double *y = j < n ? a + (long long)j * m + k : rhs + k;
                spai_reflect(y, v, m - k, h[0]);
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            if (!fail) {
                for (int k = n - 1; k >= 0; k--) {
                    double s = rhs[k];
                    for (int j = k + 1; j < n; j++)
                        s = __dadd_rn(s, -__dmul_rn(a[(long long)j * m + k], rhs[j]));
                    rhs[k] = s / rdiag[k];
                }
            }
            bad[p] = fail;
        }
        __syncthreads();
    }
}
