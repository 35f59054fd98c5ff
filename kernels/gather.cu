// Halo pack: dst[k] = src[idx[k]], the entries of a local vector that a
// neighbour needs, into a contiguous send buffer.

extern "C" __global__ void gather(long long n, const int *__restrict__ idx,
                                  const double *__restrict__ src, double *__restrict__ dst)
{
    for (long long k = fsai_tid(); k < n; k += fsai_stride())
        dst[k] = src[idx[k]];
}

// Values-only FSAI update: dst[k] = src[idx[k]] in float32, the rows that a
// prepared plan computed moved into the blocks of G and G' that PCG applies
// (package gpu, fixed_place.go).
extern "C" __global__ void gather_f32(long long n, const int *__restrict__ idx,
                                      const float *__restrict__ src, float *__restrict__ dst)
{
    for (long long k = fsai_tid(); k < n; k += fsai_stride())
        dst[k] = src[idx[k]];
}
