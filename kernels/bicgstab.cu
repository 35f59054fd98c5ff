// BiCGSTAB's fused vector updates (bicgstab.Fused): each one pass over its
// vectors, a diagonal preconditioner d (Jacobi) applied in the pass where d
// is not null, and the sums the next step needs taken as the pass goes
// (reduce.cu's deterministic grid sums). Grid-stride loops.

// p = r + beta*(p - omega*v), or p = r where beta is 0 (p and v not read);
// ph = d .* p where d is not null.
extern "C" __global__ void bicgstab_direction(long long n, double beta, double omega,
                                              double *__restrict__ p, const double *__restrict__ r,
                                              const double *__restrict__ v,
                                              const double *__restrict__ d, double *__restrict__ ph)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        const double y = beta == 0.0 ? r[i] : r[i] + beta * (p[i] - omega * v[i]);
        p[i] = y;
        if (d)
            ph[i] = d[i] * y;
    }
}

// s = r - alpha*v, sh = d .* s where d is not null; result[0] = s's.
extern "C" __global__ void bicgstab_half(long long n, double alpha, double *__restrict__ s,
                                         const double *__restrict__ r, const double *__restrict__ v,
                                         const double *__restrict__ d, double *__restrict__ sh,
                                         double *partials, unsigned *counter, double *result)
{
    double ss = 0.0;
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        const double y = r[i] - alpha * v[i];
        s[i] = y;
        if (d)
            sh[i] = d[i] * y;
        ss += y * y;
    }
    fsai_grid_sum(ss, partials, counter, result);
}

// x += alpha*ph + omega*sh and r = s - omega*t; result[0] = r'r and
// result[1] = r'rhat of the new r.
extern "C" __global__ void bicgstab_step(long long n, double alpha, double omega,
                                         double *__restrict__ x, const double *__restrict__ ph,
                                         const double *__restrict__ sh, double *__restrict__ r,
                                         const double *__restrict__ s, const double *__restrict__ t,
                                         const double *__restrict__ rhat, double *partials,
                                         unsigned *counter, double *result)
{
    double rr = 0.0, rq = 0.0;
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        x[i] += alpha * ph[i] + omega * sh[i];
        const double y = s[i] - omega * t[i];
        r[i] = y;
        rr += y * y;
        rq += y * rhat[i];
    }
    fsai_grid_sum2(rr, rq, partials, counter, result);
}
