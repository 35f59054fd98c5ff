// Pattern of static FSAI (paper 000, Algorithm 3.1 and section 4.2): row i
// of Low(B_K), B_1 = Low(A~), B_{p+1} = Low(B_p A~), where A~ is A without
// the off-diagonal entries |a_rc| <= tau sqrt(a_rr a_cc): the columns
// c <= i reachable from i in at most K steps through the graph of A~
// restricted to the vertices <= i, as afsai/static.go's buildPattern finds
// them.
//
// A group of lanes per row searches breadth first. The columns found so
// far sit in a list in the group's share of shared memory, each step's in
// a segment of their own, and a hash table there says which are found: the
// lanes take the entries of the step's frontier rows, a lane each, insert
// the new columns into the table and append them to the list by a ballot.
// The set found after K steps does not depend on the order of the
// insertions, and the pattern is written sorted: each column's place is
// the number of smaller ones.
//
// Package gpu runs the kernel twice: once over all rows to size the batch
// state by the longest pattern (longest not NULL: nothing else is
// written; with 8 lanes first, then 32 where a row's pattern does not fit
// 8 lanes' list), then per batch, writing the off-diagonal columns
// ascending into S.pat and their number into S.ncand, where the
// fixed-pattern steps of fsai_sysgather_sorted and fsai_border take them
// (fsai_static.go).

// A group of G lanes serves a row: 8 or 32 (package gpu picks). Its
// list holds fsai_pattern_cap<G>() columns, the diagonal included: 64 for
// 8 lanes, whose tables keep four times the rows of a multiprocessor in
// flight, 256 for 32; its table, 2^fsai_pattern_bits<G>() slots, twice
// that. A block of FSAI_BLOCK threads holds 24 KiB of them either way.
template <int G> __device__ __forceinline__ constexpr int fsai_pattern_bits()
{
    return G == 32 ? 9 : 7;
}

template <int G> __device__ __forceinline__ constexpr int fsai_pattern_cap()
{
    return 1 << (fsai_pattern_bits<G>() - 1);
}

// fsai_pattern_search finds row i's pattern into the group's list (the
// diagonal first) and returns its length, or the list's capacity + 1 when
// it does not fit. A step takes its frontier rows G at a time, a lane each
// loading one row's bounds, lays their entries end to end and takes G of
// them at a time, as the gradient does (kapgrad.cu): the short rows of a
// stencil then cost one round of loads per step, not one per row.
template <int G>
__device__ int fsai_pattern_search(const FsaiSetup &S, int i, double tau, int K, int *keys, int *list, unsigned mask)
{
    constexpr int bits = fsai_pattern_bits<G>(), cap = fsai_pattern_cap<G>();
    const int lane = threadIdx.x & (G - 1), first = threadIdx.x & 31 & ~(G - 1);
    for (int h = lane; h < (1 << bits); h += G)
        keys[h] = FSAI_EMPTY;
    __syncwarp(mask);
    if (lane == 0) {
        list[0] = i;
        fsai_slot(keys, bits, i);
    }
    __syncwarp(mask);
    int size = 1, from = 0;
    for (int step = 0; step < K && from < size; step++) {
        const int to = size; // this step's frontier: list[from:to]; new columns go after it
        for (int base = from; base < to; base += G) {
            int lo = 0, len = 0;
            float d = 0.0f;
            if (base + lane < to) {
                const int r = list[base + lane];
                lo = S.rowptr[r];
                len = S.rowptr[r + 1] - lo;
                d = S.diag[r];
            }
            int total;
            const int start = fsai_lay_out<G>(mask, lane, len, &total);
            for (int t0 = 0; t0 < total; t0 += G) {
                const int t = t0 + lane, q = fsai_row_of<G>(mask, start, t);
                const int sq = __shfl_sync(mask, start, q, G), lq = __shfl_sync(mask, lo, q, G);
                const double dr = (double)__shfl_sync(mask, d, q, G);
                bool added = false;
                int c = 0;
                if (t < total) {
                    const int e = lq + t - sq;
                    c = S.col[e];
                    if (c <= i) {
                        const double lim = __dmul_rn(tau, __dsqrt_rn(__dmul_rn(dr, (double)S.diag[c])));
                        if (!(fabs((double)S.val[e]) <= lim))
                            fsai_insert(keys, bits, c, &added);
                    }
                }
                const unsigned got = (__ballot_sync(mask, added) >> first) & (G == 32 ? FSAI_FULL : (1u << G) - 1);
                const int at = size + __popc(got & ((1u << lane) - 1));
                if (added && at < cap)
                    list[at] = c;
                size += __popc(got);
                if (size > cap)
                    return cap + 1;
            }
            __syncwarp(mask);
        }
        from = to;
    }
    __syncwarp(mask);
    return size;
}

// fsai_static_pattern_rows runs a group of G lanes per row: with longest
// set, it only finds the longest pattern (off the diagonal) of the S.nb
// rows into *longest; else it writes each row's off-diagonal columns
// ascending into S.pat and their number into S.ncand.
template <int G> __device__ __forceinline__ void fsai_static_pattern_rows(const FsaiSetup &S, double tau, int K, int *longest)
{
    constexpr int bits = fsai_pattern_bits<G>(), cap = fsai_pattern_cap<G>(), groups = FSAI_BLOCK / G;
    __shared__ int keys_all[groups << bits];
    __shared__ int list_all[groups * cap];
    const int lane = threadIdx.x & (G - 1), group = threadIdx.x / G;
    const unsigned mask = (G == 32 ? FSAI_FULL : (1u << G) - 1) << (threadIdx.x & 31 & ~(G - 1));
    int *keys = keys_all + (group << bits), *list = list_all + group * cap;
    const long long nb = S.nb;
    int most = 0;
    for (long long k = fsai_tid() / G; k < nb; k += fsai_stride() / G) {
        const int i = S.rows[k], size = fsai_pattern_search<G>(S, i, tau, K, keys, list, mask);
        most = max(most, size - 1);
        if (longest)
            continue;
        for (int q = lane; q < size; q += G) {
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
        __syncwarp(mask);
    }
    if (longest && lane == 0)
        atomicMax(longest, most);
}

extern "C" __global__ void fsai_static_pattern8(const FsaiSetup S, double tau, int K, int *longest)
{
    fsai_static_pattern_rows<8>(S, tau, K, longest);
}

extern "C" __global__ void fsai_static_pattern32(const FsaiSetup S, double tau, int K, int *longest)
{
    fsai_static_pattern_rows<32>(S, tau, K, longest);
}
