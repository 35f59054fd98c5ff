// Reductions that return one number to the host: dot and the fused PCG
// update. One launch each: every block sums its share, the last block adds
// the block sums in a fixed order (fsai_grid_sum), so results are
// deterministic. Loops are unrolled by four with independent partial sums to
// keep enough loads in flight on a grid of a few blocks per multiprocessor.

extern "C" __global__ void dot(long long n, const double *__restrict__ x,
                               const double *__restrict__ y, double *partials,
                               unsigned *counter, double *result)
{
    long long i = fsai_tid(), s = fsai_stride();
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    for (; i + 3 * s < n; i += 4 * s) {
        a0 += x[i] * y[i];
        a1 += x[i + s] * y[i + s];
        a2 += x[i + 2 * s] * y[i + 2 * s];
        a3 += x[i + 3 * s] * y[i + 3 * s];
    }
    for (; i < n; i += s)
        a0 += x[i] * y[i];
    fsai_grid_sum((a0 + a1) + (a2 + a3), partials, counter, result);
}

// PCG's residual update with a diagonal preconditioner d: r -= a*q, and
// result[0] = r'r and result[1] = r'(d .* r) after it. z = d .* r itself is
// not stored: update_xp forms it where the next direction needs it.
extern "C" __global__ void update_rz(long long n, double a, double *__restrict__ r,
                                     const double *__restrict__ q, const double *__restrict__ d,
                                     double *partials, unsigned *counter, double *result)
{
    long long i = fsai_tid(), s = fsai_stride();
    double rr = 0.0, rz = 0.0;
    for (; i < n; i += s) {
        double r0 = r[i] - a * q[i], rd = r0 * r0;
        r[i] = r0;
        rr += rd;
        rz += d[i] * rd;
    }
    fsai_grid_sum2(rr, rz, partials, counter, result);
}
