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
