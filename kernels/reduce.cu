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

// The Jacobi PCG step in one pass: x += a*p; r -= a*q; z = d .* r;
// result[0] = r'r and result[1] = r'z after the update.
extern "C" __global__ void update_xrz(long long n, double a, double *__restrict__ x,
                                      double *__restrict__ r, const double *__restrict__ p,
                                      const double *__restrict__ q, const double *__restrict__ d,
                                      double *__restrict__ z, double *partials,
                                      unsigned *counter, double *result)
{
    long long i = fsai_tid(), s = fsai_stride();
    double rr = 0.0, rz = 0.0;
    for (; i < n; i += s) {
        double r0 = r[i] - a * q[i], z0 = d[i] * r0;
        x[i] += a * p[i];
        r[i] = r0;
        z[i] = z0;
        rr += r0 * r0;
        rz += r0 * z0;
    }
    fsai_grid_sum2(rr, rz, partials, counter, result);
}
