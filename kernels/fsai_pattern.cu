// Pattern of static FSAI (paper 000, Algorithm 3.1 and section 4.2): row i
// of Low(B_K), B_1 = Low(A~), B_{p+1} = Low(B_p A~), where A~ is A without
// the off-diagonal entries |a_rc| <= tau sqrt(a_rr a_cc): the columns
// c <= i reachable from i in at most K steps through the graph of A~
// restricted to the vertices <= i, as afsai/static.go's buildPattern finds
// them.
//
// A warp per row searches breadth first. The columns found so far sit in a
// list in the warp's share of shared memory, each step's in a segment of
// their own, and a hash table there says which are found: the lanes take 32
// entries of a frontier row at a time, insert the new columns into the table
// and append them to the list by a ballot. The set found after K steps does
// not depend on the order of the insertions, and the pattern is written
// sorted: each column's place is the number of smaller ones.
//
// Package gpu runs the kernel twice: once over all rows to size the batch
// state by the longest pattern (longest not NULL: nothing else is
// written), then per batch, writing the off-diagonal columns ascending into
// S.pat and their number into S.ncand, where the fixed-pattern steps of
// fsai_sysgather and fsai_border take them (fsai_static.go).

// FSAI_PATTERN_CAP is the most columns a row's search holds, the diagonal
// included; FSAI_PATTERN_BITS sizes the table at twice that.
#define FSAI_PATTERN_CAP 256
#define FSAI_PATTERN_BITS 9
#define FSAI_PATTERN_WARPS (FSAI_BLOCK / 32)

// fsai_pattern_search finds row i's pattern into the warp's list (the
// diagonal first) and returns its length, or FSAI_PATTERN_CAP + 1 when it
// does not fit. A step takes its frontier rows 32 at a time, a lane each
// loading one row's bounds, lays their entries end to end and takes 32 of
// them at a time, as the gradient does (kapgrad.cu): the short rows of a
// stencil then cost one round of loads per step, not one per row.
__device__ int fsai_pattern_search(const FsaiSetup &S, int i, double tau, int K, int *keys, int *list)
{
    const int lane = threadIdx.x & 31;
    for (int h = lane; h < (1 << FSAI_PATTERN_BITS); h += 32)
        keys[h] = FSAI_EMPTY;
    __syncwarp();
    if (lane == 0) {
        list[0] = i;
        fsai_slot(keys, FSAI_PATTERN_BITS, i);
    }
    __syncwarp();
    int size = 1, from = 0;
    for (int step = 0; step < K && from < size; step++) {
        const int to = size; // this step's frontier: list[from:to]; new columns go after it
        for (int base = from; base < to; base += 32) {
            int lo = 0, len = 0;
            float d = 0.0f;
            if (base + lane < to) {
                const int r = list[base + lane];
                lo = S.rowptr[r];
                len = S.rowptr[r + 1] - lo;
                d = S.diag[r];
            }
            int end = len; // the end of this lane's row among the entries laid end to end
            for (int off = 1; off < 32; off <<= 1) {
                const int y = __shfl_up_sync(FSAI_FULL, end, off);
                if (lane >= off)
                    end += y;
            }
            const int start = end - len, total = __shfl_sync(FSAI_FULL, end, 31);
            for (int t0 = 0; t0 < total; t0 += 32) {
                const int t = t0 + lane;
                int q = 0; // the last row that starts at or before entry t
                for (int half = 16; half > 0; half >>= 1) {
                    if (__shfl_sync(FSAI_FULL, start, q + half) <= t)
                        q += half;
                }
                const int sq = __shfl_sync(FSAI_FULL, start, q), lq = __shfl_sync(FSAI_FULL, lo, q);
                const double dr = (double)__shfl_sync(FSAI_FULL, d, q);
                bool added = false;
                int c = 0;
                if (t < total) {
                    const int e = lq + t - sq;
                    c = S.col[e];
                    if (c <= i) {
                        const double lim = __dmul_rn(tau, __dsqrt_rn(__dmul_rn(dr, (double)S.diag[c])));
                        if (!(fabs((double)S.val[e]) <= lim))
                            fsai_insert(keys, FSAI_PATTERN_BITS, c, &added);
                    }
                }
                const unsigned got = __ballot_sync(FSAI_FULL, added);
                const int at = size + __popc(got & ((1u << lane) - 1));
                if (added && at < FSAI_PATTERN_CAP)
                    list[at] = c;
                size += __popc(got);
                if (size > FSAI_PATTERN_CAP)
                    return FSAI_PATTERN_CAP + 1;
            }
            __syncwarp();
        }
        from = to;
    }
    __syncwarp();
    return size;
}

extern "C" __global__ void fsai_static_pattern(const FsaiSetup S, double tau, int K, int *longest)
{
    __shared__ int keys_all[FSAI_PATTERN_WARPS << FSAI_PATTERN_BITS];
    __shared__ int list_all[FSAI_PATTERN_WARPS * FSAI_PATTERN_CAP];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int *keys = keys_all + (warp << FSAI_PATTERN_BITS), *list = list_all + warp * FSAI_PATTERN_CAP;
    const long long nb = S.nb;
    int most = 0;
    for (long long k = fsai_tid() >> 5; k < nb; k += fsai_stride() >> 5) {
        const int i = S.rows[k], size = fsai_pattern_search(S, i, tau, K, keys, list);
        most = max(most, size - 1);
        if (longest)
            continue;
        for (int q = lane; q < size; q += 32) {
            const int c = list[q];
            if (c == i)
                continue;
            int place = 0; // i, the largest, is not counted
            for (int u = 0; u < size; u++)
                place += list[u] < c;
            S.pat[place * nb + k] = c;
        }
        if (lane == 0)
            S.ncand[k] = size - 1;
        __syncwarp();
    }
    if (longest && lane == 0)
        atomicMax(longest, most);
}
