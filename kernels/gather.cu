// Halo pack: dst[k] = src[idx[k]], the entries of a local vector that a
// neighbour needs, into a contiguous send buffer.

extern "C" __global__ void gather(long long n, const int *__restrict__ idx,
                                  const double *__restrict__ src, double *__restrict__ dst)
{
    for (long long k = fsai_tid(); k < n; k += fsai_stride())
        dst[k] = src[idx[k]];
}
