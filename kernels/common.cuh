// Shared device helpers: launch geometry and deterministic reductions.
// Every kernel runs with blocks of FSAI_BLOCK threads (package gpu launches
// them so).

#define FSAI_BLOCK 256

// Index of this thread in the grid and the grid's stride, as 64-bit integers
// so that vectors longer than 2^31 entries index correctly.
__device__ __forceinline__ long long fsai_tid()
{
    return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long fsai_stride()
{
    return (long long)gridDim.x * blockDim.x;
}

// fsai_block_sum returns the sum of v over the block in thread 0 (other
// threads get partial sums). The order of additions is fixed, so the result
// is the same on every run. It starts with a barrier so that it can be called
// twice in one kernel.
__device__ double fsai_block_sum(double v)
{
    __shared__ double warp_sums[FSAI_BLOCK / 32];
    __syncthreads();
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < FSAI_BLOCK / 32 ? warp_sums[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;
}

// fsai_last_block reports, in every thread of a block whose partial sums
// are written, whether it is the last block of the grid to get there: the
// one that adds the partials, which it then sees (volatile reads). Blocks
// count arrivals in *counter, which must be 0 before the launch; the last
// block's atomicInc wraps it back to 0 for the next one.
__device__ bool fsai_last_block(unsigned *counter)
{
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;
    __syncthreads();
    if (last)
        __threadfence();
    return last;
}

// fsai_grid_reduce2 finishes two reductions of the grid: each block stores
// its sums in partials[blockIdx.x] and partials[gridDim.x + blockIdx.x]; the
// last block to finish adds the partials in index order and returns true in
// its thread 0, with the sums in *s and *t (false elsewhere). Deterministic
// for a given grid size (unlike atomicAdd on doubles). *counter must be 0
// before the launch; the last block's atomicInc wraps it back to 0 for the
// next one.
__device__ bool fsai_grid_reduce2(double v, double w, double *partials, unsigned *counter,
                                  double *s, double *t)
{
    v = fsai_block_sum(v);
    w = fsai_block_sum(w);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        partials[gridDim.x + blockIdx.x] = w;
    }
    if (!fsai_last_block(counter))
        return false;
    const volatile double *p = partials;
    double a = 0.0, b = 0.0;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x) {
        a += p[i];
        b += p[gridDim.x + i];
    }
    a = fsai_block_sum(a);
    b = fsai_block_sum(b);
    *s = a;
    *t = b;
    return threadIdx.x == 0;
}

// fsai_grid_sum2 writes the two sums of fsai_grid_reduce2 to result[0] and
// result[1]. result may be page-locked host memory, which the device writes
// directly.
__device__ void fsai_grid_sum2(double v, double w, double *partials, unsigned *counter, double *result)
{
    double s, t;
    if (fsai_grid_reduce2(v, w, partials, counter, &s, &t)) {
        result[0] = s;
        result[1] = t;
    }
}

// fsai_grid_sum is fsai_grid_sum2 for one sum (the second is zero, so
// partials and result still need room for two).
__device__ void fsai_grid_sum(double v, double *partials, unsigned *counter, double *result)
{
    fsai_grid_sum2(v, 0.0, partials, counter, result);
}

// fsai_grid_add adds the grid's sum of v to *acc: kernels that queue one
// after another on a stream add to it in their order, so the total is
// deterministic too.
__device__ void fsai_grid_add(double v, double *partials, unsigned *counter, double *acc)
{
    double s, t;
    if (fsai_grid_reduce2(v, 0.0, partials, counter, &s, &t))
        *acc += s;
}
