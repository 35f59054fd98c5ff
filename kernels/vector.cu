// Element-wise vector kernels of PCG: fill, axpby, mul. Grid-stride loops, so
// any grid size covers any length.

extern "C" __global__ void fill(long long n, double v, double *x)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride())
        x[i] = v;
}

// y = a*x + b*y; with b == 0, y is not read (it may hold NaN), as in BLAS.
extern "C" __global__ void axpby(long long n, double a, const double *__restrict__ x,
                                 double b, double *__restrict__ y)
{
    if (b == 0.0) {
        for (long long i = fsai_tid(); i < n; i += fsai_stride())
            y[i] = a * x[i];
    } else {
        for (long long i = fsai_tid(); i < n; i += fsai_stride())
            y[i] = a * x[i] + b * y[i];
    }
}

// z = d .* r (Jacobi scaling).
extern "C" __global__ void mul(long long n, const double *__restrict__ d,
                               const double *__restrict__ r, double *__restrict__ z)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride())
        z[i] = d[i] * r[i];
}

// PCG's step to the next iterate and direction: x += a*p, then p = z + b*p
// with z = d .* r for a diagonal preconditioner d (z never stored), z = r
// when d is null. One pass over x, p and r.
extern "C" __global__ void update_xp(long long n, double a, double b, double *__restrict__ x,
                                     double *__restrict__ p, const double *__restrict__ d,
                                     const double *__restrict__ r)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        double p0 = p[i], z0 = d ? d[i] * r[i] : r[i];
        x[i] += a * p0;
        p[i] = z0 + b * p0;
    }
}
