// Least squares of one SPAI block by one warp (spai/cudaspai, whose kernels
// are in spai_solve.cu): min ||C x - b||_2 for a dense block C (m x n,
// column-major) by Householder QR and back-substitution. The operations
// are those of the host (spai/rows.go: worker.solve), in the same order,
// with products and sums rounded one by one (__dmul_rn, __dadd_rn: no
// fused multiply-add), so a row comes out as the host computes it. Lane j
// updates columns j, j + 32, ... with each reflection (column n is the
// right-hand side); lane 0 forms the reflections and back-substitutes. The
// block may lie in shared or in global memory.

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

// spai_qr_warp solves min ||C x - b||_2 for the m x n block c and b[0:m]
// with the whole warp, leaving x in b[0:n]; norms and rdiag are room for n
// doubles each. It returns 0, or 1 where C's columns are dependent (as on
// the host: a column whose part orthogonal to those before it is below
// 2^-52 of its own norm, or more columns than rows). Every lane calls it
// with the same arguments; it returns with the warp's writes visible to
// the warp.
__device__ int spai_qr_warp(int m, int n, double *c, double *b, double *norms, double *rdiag)
{
    const int lane = threadIdx.x & 31;
    if (n > m)
        return 1;
    for (int j = lane; j < n; j += 32)
        norms[j] = spai_norm(c + (long long)j * m, m);
    __syncwarp();
    for (int k = 0; k < n; k++) {
        double *v = c + (long long)k * m + k;
        int fail = 0;
        double h = 0;
        if (lane == 0) {
            const double s = spai_norm(v, m - k);
            if (!(s > __dmul_rn(ldexp(1.0, -52), norms[k]))) {
                fail = 1;
            } else {
                // H = I - v v' / h, v = x - alpha e_1, h = s (s + |x_0|)
                const double alpha = -copysign(s, v[0]);
                h = __dmul_rn(s, __dadd_rn(s, fabs(v[0])));
                v[0] = __dadd_rn(v[0], -alpha);
                rdiag[k] = alpha;
            }
        }
        fail = __shfl_sync(FSAI_FULL, fail, 0);
        h = __shfl_sync(FSAI_FULL, h, 0);
        __syncwarp(); // v[0] as lane 0 left it
        if (fail)
            return 1;
        for (int j = k + 1 + lane; j <= n; j += 32)
            spai_reflect(j < n ? c + (long long)j * m + k : b + k, v, m - k, h);
        __syncwarp();
    }
    if (lane == 0) {
        for (int k = n - 1; k >= 0; k--) {
            double s = b[k];
            for (int j = k + 1; j < n; j++)
                s = __dadd_rn(s, -__dmul_rn(c[(long long)j * m + k], b[j]));
            b[k] = s / rdiag[k];
        }
    }
    __syncwarp();
    return 0;
}
