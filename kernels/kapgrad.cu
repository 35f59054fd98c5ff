// Kaporin gradient and selection of the new pattern columns of the adaptive
// FSAI (paper 001 section 3, first kernel): a group of lanes per active
// row, a warp or, for the smallest tables, which would leave most of a
// warp idle, a quarter of one (package gpu picks).
//
// For row i with pattern P and current g, the gradient of psi at a candidate
// j < i not in P is 2 (A g~)_j with g~ = (g, 1) (paper 001 eq. 2.15). The
// group accumulates A g~ on the columns < i in a hash table in its share of
// shared memory, the GPU form of the CPU's sparse accumulator
// (afsai/adaptive.go): the rows of A are added in the CPU's order, row i
// first and then the pattern rows in insertion order. The group loads the
// entries of several rows at once, a lane each, and adds them row after
// row; a row holds each column once, so no two lanes add into one slot at
// once, and every slot receives its terms in the CPU's order and rounding. Each candidate then gets its weight, |gradient|
// or, when Params.Scaled, |gradient| / sqrt(a_jj) with sqrt(a_jj) taken in
// double and rounded to float (the CPU's sqrtDiag), and s rounds of an
// arg-max over the group by shuffles (the group's mask: its lanes are all
// active there) pick the s largest weights, ties to the smaller column; zero
// gradients are never taken. The picks are written after the pattern, in
// pick order: the same whatever the group's size.
//
// Shared memory per group: 2^bits keys, sums and pattern flags (9 bytes a
// slot). Package gpu sizes the table above the number of columns the rows of
// a pattern can reach, so probing always ends.

// fsai_better orders candidates: larger weight first, then the smaller
// column (afsai cand.before).
__device__ __forceinline__ bool fsai_better(float a, int c, float b, int d)
{
    return a > b || (a == b && c < d);
}

// fsai_kapgrad_rows runs a group of G lanes (a power of two, 32 at most)
// per row. G is a compile-time constant: as a kernel parameter, the kernel
// ran 40% slower at G = 32 than with 32 written in.
template <int G> __device__ __forceinline__ void fsai_kapgrad_rows(const FsaiSetup &S, int bits)
{
    extern __shared__ int fsai_smem[];
    const int table = 1 << bits;
    const int lane = threadIdx.x & (G - 1), group = threadIdx.x / G, groups = blockDim.x / G;
    const unsigned mask = (G == 32 ? FSAI_FULL : (1u << G) - 1) << (threadIdx.x & 31 & ~(G - 1));
    int *keys = fsai_smem + group * table;
    float *acc = (float *)(fsai_smem + groups * table) + group * table;
    unsigned char *inpat = (unsigned char *)(fsai_smem + 2 * groups * table) + group * table;

    const long long nb = S.nb;
    const long long w = (long long)blockIdx.x * groups + group;
    if (w >= fsai_count(S))
        return; // the whole group leaves: w is the same on its lanes
    const long long k = fsai_row(S, w);
    if (S.state[k] != FSAI_ACTIVE)
        return;
    const int i = S.rows[k], m = S.len[k];

    for (int h = lane; h < table; h += G) {
        keys[h] = FSAI_EMPTY;
        acc[h] = 0.0f;
        inpat[h] = 0;
    }
    __syncwarp(mask);
    for (int q = lane; q < m; q += G)
        inpat[fsai_slot(keys, bits, S.pat[q * nb + k])] = 1;
    __syncwarp(mask);

    // Sources: number 0 is row i with coefficient 1, number q+1 is pattern
    // column q with coefficient g[q]. Each lane loads one source's row
    // bounds; the group lays the G sources' entries end to end and takes G
    // of them at a time, a lane each, whatever the rows' lengths: their
    // loads and hash probes are in flight together. The products then go
    // into the table source after source, so that every slot still
    // receives its terms in the CPU's order.
    for (int base = 0; base <= m; base += G) {
        const int src = base + lane;
        float coef = 0.0f;
        int lo = 0, len = 0;
        if (src <= m) {
            const int r = src == 0 ? i : S.pat[(src - 1) * nb + k];
            coef = src == 0 ? 1.0f : S.g[(src - 1) * nb + k];
            lo = S.rowptr[r];
            len = S.rowptr[r + 1] - lo;
        }
        int total;
        const int start = fsai_lay_out<G>(mask, lane, len, &total);
        for (int t0 = 0; t0 < total; t0 += G) {
            const int t = t0 + lane, q = fsai_row_of<G>(mask, start, t);
            const int sq = __shfl_sync(mask, start, q, G), lq = __shfl_sync(mask, lo, q, G);
            const float cq = __shfl_sync(mask, coef, q, G);
            int h = -1;
            float v = 0.0f;
            if (t < total) {
                const int e = lq + t - sq, c = S.col[e];
                if (c < i) { // columns >= i are not candidates
                    h = fsai_slot(keys, bits, c);
                    if (inpat[h])
                        h = -1;
                    else
                        v = __fmul_rn(cq, S.val[e]);
                }
            }
            const int first = __shfl_sync(mask, q, 0, G), last = __shfl_sync(mask, q, min(G, total - t0) - 1, G);
            for (int p = first; p <= last; p++) {
                if (h >= 0 && q == p)
                    acc[h] = __fadd_rn(acc[h], v);
                __syncwarp(mask);
            }
        }
    }

    // Weights replace the sums in acc, -1 marking the slots that hold no
    // candidate. Each lane weighs the slots that it scans below.
    for (int h = lane; h < table; h += G) {
        const int c = keys[h];
        float w = -1.0f;
        if (c != FSAI_EMPTY && !inpat[h] && acc[h] != 0.0f) {
            w = fabsf(acc[h]);
            if (S.scaled)
                w = __fdiv_rn(w, __double2float_rn(__dsqrt_rn((double)S.diag[c])));
        }
        acc[h] = w;
    }

    // Round t picks the best candidate after round t-1's pick in the order.
    int chosen = 0;
    float pa = 0.0f;
    int pc = 0;
    for (int t = 0; t < S.s; t++) {
        float ba = -1.0f;
        int bc = 0x7fffffff;
        for (int h = lane; h < table; h += G) {
            const float a = acc[h];
            if (a < 0.0f)
                continue;
            const int c = keys[h];
            if (t > 0 && !fsai_better(pa, pc, a, c))
                continue; // picked already
            if (fsai_better(a, c, ba, bc)) {
                ba = a;
                bc = c;
            }
        }
        for (int off = G / 2; off > 0; off >>= 1) {
            const float oa = __shfl_xor_sync(mask, ba, off, G);
            const int oc = __shfl_xor_sync(mask, bc, off, G);
            if (fsai_better(oa, oc, ba, bc)) {
                ba = oa;
                bc = oc;
            }
        }
        if (ba < 0.0f)
            break; // no candidate left; the same on every lane
        if (lane == 0)
            S.pat[(m + t) * nb + k] = bc;
        pa = ba;
        pc = bc;
        chosen++;
    }
    if (lane == 0) {
        S.ncand[k] = chosen;
        if (chosen == 0)
            S.state[k] = FSAI_DONE;
    }
}

extern "C" __global__ void fsai_kapgrad8(const FsaiSetup S, int bits) { fsai_kapgrad_rows<8>(S, bits); }
extern "C" __global__ void fsai_kapgrad32(const FsaiSetup S, int bits) { fsai_kapgrad_rows<32>(S, bits); }
