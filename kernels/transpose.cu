// CSR transpose on the device: the factor G of FSAI stays on the GPU and
// G' is built there, instead of a round trip through the host.
//
// Four passes, each a launch or three (package gpu, transpose.go, queues
// them), over ptrT, the c + 1 row pointers of the transpose:
//  1. transpose_count: the entries of each column j, by atomicAdd, into
//     ptrT[j] (zeroed before; ptrT[c] is set to the number of entries);
//  2. transpose_scan_tiles, _sums, _add: the inclusive prefix sum of
//     ptrT[0, c) in place, which makes ptrT[j] the end of row j;
//  3. transpose_scatter_d/_s: entry (i, j, v) takes the last free slot of
//     row j, by atomicSub on ptrT[j], and writes (i, v) there; once all are
//     placed ptrT[j] is the start of row j: the row pointers, with no
//     second array of fill counters;
//  4. transpose_sort_d/_s: each row sorted by column. The atomics of the
//     scatter fill a row in an order that changes from run to run; the
//     columns of a row are distinct, so sorting makes the result unique:
//     the host's csr.Transpose, entry for entry.

// A tile of the prefix sum: FSAI_SCAN_ITEMS consecutive entries per thread
// of a block (scanTile in package gpu).
#define FSAI_SCAN_ITEMS 8
#define FSAI_SCAN_TILE (FSAI_BLOCK * FSAI_SCAN_ITEMS)

// Entries a thread of the scatter has in flight at once: their atomics are
// issued before any of their results is waited for.
#define FSAI_SCATTER_BATCH 4

// Rows of the transpose of up to FSAI_SORT_REGS entries are sorted in
// registers (the common case: loads and stores all in flight at once);
// longer ones in place by heapsort, so that a long column of the original
// (a dense column) costs O(L log L), not O(L^2).
#define FSAI_SORT_REGS 16

extern "C" __global__ void transpose_count(long long nnz, const int *__restrict__ col, int *count)
{
    for (long long k = fsai_tid(); k < nnz; k += fsai_stride())
        atomicAdd(count + col[k], 1);
}

// fsai_scan_tile replaces data[lo, min(lo + FSAI_SCAN_TILE, n)) with its
// inclusive prefix sum plus carry, and returns carry plus the tile's sum in
// every thread of the block. All threads of the block call it. It starts
// with a barrier so that a block can call it again for the next tile.
__device__ int fsai_scan_tile(int *data, long long lo, long long n, int carry)
{
    __shared__ int tile[FSAI_SCAN_TILE];
    __shared__ int warp_sums[FSAI_BLOCK / 32];
    __syncthreads();
    for (int q = 0; q < FSAI_SCAN_ITEMS; q++) {
        int k = threadIdx.x + q * FSAI_BLOCK;
        tile[k] = lo + k < n ? data[lo + k] : 0;
    }
    __syncthreads();
    // Each thread scans its own FSAI_SCAN_ITEMS consecutive entries...
    int *mine = tile + threadIdx.x * FSAI_SCAN_ITEMS;
    int s = 0;
    for (int q = 0; q < FSAI_SCAN_ITEMS; q++) {
        s += mine[q];
        mine[q] = s;
    }
    // ...then the block scans the threads' sums: within warps by shuffles,
    // then the warps' sums by the first warp.
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int x = s;
    for (int off = 1; off < 32; off <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off)
            x += y;
    }
    if (lane == 31)
        warp_sums[warp] = x;
    __syncthreads();
    if (warp == 0) {
        int w = lane < FSAI_BLOCK / 32 ? warp_sums[lane] : 0;
        for (int off = 1; off < FSAI_BLOCK / 32; off <<= 1) {
            int y = __shfl_up_sync(0xffffffffu, w, off);
            if (lane >= off)
                w += y;
        }
        if (lane < FSAI_BLOCK / 32)
            warp_sums[lane] = w;
    }
    __syncthreads();
    int before = carry + x - s + (warp > 0 ? warp_sums[warp - 1] : 0);
    for (int q = 0; q < FSAI_SCAN_ITEMS; q++)
        mine[q] += before;
    __syncthreads();
    for (int q = 0; q < FSAI_SCAN_ITEMS; q++) {
        int k = threadIdx.x + q * FSAI_BLOCK;
        if (lo + k < n)
            data[lo + k] = tile[k];
    }
    return carry + warp_sums[FSAI_BLOCK / 32 - 1];
}

// Prefix sum, pass 1: block b scans tile b of data on its own and stores
// the tile's sum in sums[b]. One block per tile.
extern "C" __global__ void transpose_scan_tiles(long long n, int *data, int *sums)
{
    int total = fsai_scan_tile(data, (long long)blockIdx.x * FSAI_SCAN_TILE, n, 0);
    if (threadIdx.x == 0)
        sums[blockIdx.x] = total;
}

// Prefix sum, pass 2: the inclusive prefix sum of the tiles' sums, by one
// block, tile after tile (24 tiles of sums for 10^8 entries).
extern "C" __global__ void transpose_scan_sums(long long tiles, int *sums)
{
    int carry = 0;
    for (long long lo = 0; lo < tiles; lo += FSAI_SCAN_TILE)
        carry = fsai_scan_tile(sums, lo, tiles, carry);
}

// Prefix sum, pass 3: every entry past the first tile gets the sum of the
// tiles before its own.
extern "C" __global__ void transpose_scan_add(long long n, int *data, const int *__restrict__ sums)
{
    for (long long k = FSAI_SCAN_TILE + fsai_tid(); k < n; k += fsai_stride())
        data[k] += sums[k / FSAI_SCAN_TILE - 1];
}

// Scatter: one thread per row i of the original; each entry (i, j, v)
// takes the last free slot of row j of the transpose (end[j] - 1, then
// end[j] moves down) and writes (i, v) there. The entries of a row go in
// batches, whose atomics are in flight together.
template <typename T>
__device__ __forceinline__ void fsai_transpose_scatter(int rows, const int *__restrict__ rowptr,
                                                       const int *__restrict__ col,
                                                       const T *__restrict__ val, int *end,
                                                       int *__restrict__ colT, T *__restrict__ valT)
{
    for (long long i = fsai_tid(); i < rows; i += fsai_stride()) {
        for (long long k = rowptr[i], hi = rowptr[i + 1]; k < hi; k += FSAI_SCATTER_BATCH) {
            int p[FSAI_SCATTER_BATCH];
            T v[FSAI_SCATTER_BATCH];
#pragma unroll
            for (int q = 0; q < FSAI_SCATTER_BATCH; q++) {
                if (k + q < hi) {
                    v[q] = val[k + q];
                    p[q] = atomicSub(end + col[k + q], 1) - 1;
                }
            }
#pragma unroll
            for (int q = 0; q < FSAI_SCATTER_BATCH; q++) {
                if (k + q < hi) {
                    colT[p[q]] = (int)i;
                    valT[p[q]] = v[q];
                }
            }
        }
    }
}

// fsai_sort_regs sorts the n <= R entries (col[k], val[k]) by column in
// registers: odd-even transposition sort, whose compare-exchanges all have
// fixed indices once unrolled; slots past n hold the largest int and stay
// last.
template <typename T, int R>
__device__ __forceinline__ void fsai_sort_regs(int *col, T *val, int n)
{
    int c[R];
    T v[R];
#pragma unroll
    for (int q = 0; q < R; q++) {
        c[q] = q < n ? col[q] : 0x7fffffff;
        v[q] = q < n ? val[q] : (T)0;
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
#pragma unroll
        for (int q = r & 1; q + 1 < R; q += 2) {
            if (c[q] > c[q + 1]) {
                int ct = c[q];
                c[q] = c[q + 1];
                c[q + 1] = ct;
                T vt = v[q];
                v[q] = v[q + 1];
                v[q + 1] = vt;
            }
        }
    }
#pragma unroll
    for (int q = 0; q < R; q++) {
        if (q < n) {
            col[q] = c[q];
            val[q] = v[q];
        }
    }
}

// fsai_sift moves the entry at root of the max-heap of n entries (by
// column) down to its place.
template <typename T>
__device__ __forceinline__ void fsai_sift(int *col, T *val, int root, int n)
{
    int c = col[root];
    T v = val[root];
    for (int child = 2 * root + 1; child < n; child = 2 * root + 1) {
        if (child + 1 < n && col[child + 1] > col[child])
            child++;
        if (c >= col[child])
            break;
        col[root] = col[child];
        val[root] = val[child];
        root = child;
    }
    col[root] = c;
    val[root] = v;
}

// fsai_sort_row sorts the n entries (col[k], val[k]) by column: in
// registers, in a network of 4, 8 or 16 slots (the fewest that hold the
// row), or in place by heapsort.
template <typename T>
__device__ __forceinline__ void fsai_sort_row(int *col, T *val, int n)
{
    if (n <= 1)
        return;
    if (n <= 4) {
        fsai_sort_regs<T, 4>(col, val, n);
        return;
    }
    if (n <= 8) {
        fsai_sort_regs<T, 8>(col, val, n);
        return;
    }
    if (n <= FSAI_SORT_REGS) {
        fsai_sort_regs<T, FSAI_SORT_REGS>(col, val, n);
        return;
    }
    for (int root = n / 2 - 1; root >= 0; root--)
        fsai_sift(col, val, root, n);
    for (int last = n - 1; last > 0; last--) {
        int c = col[last];
        T v = val[last];
        col[last] = col[0];
        val[last] = val[0];
        col[0] = c;
        val[0] = v;
        fsai_sift(col, val, 0, last);
    }
}

// Sort: one thread per row of the transpose.
template <typename T>
__device__ __forceinline__ void fsai_transpose_sort(int rows, const int *__restrict__ rowptr,
                                                    int *col, T *val)
{
    for (long long i = fsai_tid(); i < rows; i += fsai_stride()) {
        int lo = rowptr[i];
        fsai_sort_row(col + lo, val + lo, rowptr[i + 1] - lo);
    }
}

#define FSAI_TRANSPOSE(suffix, T)                                                                      \
    extern "C" __global__ void transpose_scatter_##suffix(int rows, const int *rowptr, const int *col, \
                                                          const T *val, int *end, int *colT, T *valT)  \
    {                                                                                                  \
        fsai_transpose_scatter<T>(rows, rowptr, col, val, end, colT, valT);                            \
    }                                                                                                  \
    extern "C" __global__ void transpose_sort_##suffix(int rows, const int *rowptr, int *col, T *val)  \
    {                                                                                                  \
        fsai_transpose_sort<T>(rows, rowptr, col, val);                                                \
    }

FSAI_TRANSPOSE(d, double)
FSAI_TRANSPOSE(s, float)
