// Gram-Schmidt on a Krylov basis: the vectors v_c of n entries that follow
// one another from v, and a new vector w of n entries.
//
// fsai_many runs a thread per entry of w (grid-stride): the thread reads its
// entry of each of the kc vectors once, into registers, adds their multiples
// to w[i] and writes it (where update is set), and adds the products of the
// same registers with w[i] to its kc + 1 sums. So each vector is read once
// for both the update and the dots, and every read of a warp is coalesced
// (consecutive threads, consecutive entries of one vector). The loops over
// the vectors are unrolled to MANY, so the registers are indexed at compile
// time; the kernels below hold at most 8 and 32 vectors (fewer registers, so
// more resident blocks, for few), and package gpu picks the smaller that
// holds a launch's vectors.

// With update: w[i] += sum_c a[c]*v_c[i] over the kc <= MANY vectors v_c,
// adding the terms in the order of c (as axpy_many); without, w is not
// written (a is not read). Then result[c] = v_c'w for c < kc and result[kc]
// = w'w. Each block adds its threads' sums in a fixed tree (fsai_block_sum)
// into partials[c*G + block] (G blocks); the last block to finish adds them
// in block order: deterministic for a given grid. *counter must be 0 before
// the launch; the last block wraps it back to 0 (fsai_last_block).
template <int MANY>
__device__ __forceinline__ void fsai_many(const FsaiCols a, long long n, int kc, int update,
                                          const double *__restrict__ v, double *__restrict__ w,
                                          double *partials, unsigned *counter, double *result)
{
    double s[MANY + 1];
#pragma unroll
    for (int c = 0; c <= MANY; c++)
        s[c] = 0.0;
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        double x[MANY];
#pragma unroll
        for (int c = 0; c < MANY; c++)
            x[c] = c < kc ? v[(long long)c * n + i] : 0.0;
        double wi = w[i];
        if (update) {
#pragma unroll
            for (int c = 0; c < MANY; c++)
                if (c < kc)
                    wi += a.v[c] * x[c];
            w[i] = wi;
        }
#pragma unroll
        for (int c = 0; c < MANY; c++)
            s[c] += x[c] * wi;
        s[MANY] += wi * wi;
    }

    // block sums: sum c (w'w as sum kc) into partials[c*G + block]
    const unsigned G = gridDim.x;
#pragma unroll
    for (int c = 0; c <= MANY; c++) {
        if (c < kc || c == MANY) { // the same for every thread
            const double b = fsai_block_sum(s[c]);
            if (threadIdx.x == 0)
                partials[(long long)(c < kc ? c : kc) * G + blockIdx.x] = b;
        }
    }
    if (!fsai_last_block(counter))
        return;
    const volatile double *p = partials;
    for (int c = 0; c <= kc; c++) {
        double t = 0.0;
        for (unsigned g = threadIdx.x; g < G; g += blockDim.x)
            t += p[(long long)c * G + g];
        t = fsai_block_sum(t);
        if (threadIdx.x == 0)
            result[c] = t;
    }
}

// fsai_many for at most 8 vectors.
extern "C" __global__ void many_8(const FsaiCols a, long long n, int kc, int update,
                                  const double *__restrict__ v, double *__restrict__ w,
                                  double *partials, unsigned *counter, double *result)
{
    fsai_many<8>(a, n, kc, update, v, w, partials, counter, result);
}

// fsai_many for at most 32 vectors.
extern "C" __global__ void many_32(const FsaiCols a, long long n, int kc, int update,
                                   const double *__restrict__ v, double *__restrict__ w,
                                   double *partials, unsigned *counter, double *result)
{
    fsai_many<32>(a, n, kc, update, v, w, partials, counter, result);
}
