// The rows of the SPAI preconditioner built and solved on the GPU
// (spai/cudaspai), one warp per row, from the rank's local system in
// device memory: its rows (own and collected, ascending by global index)
// in CSR, row pointers rowptr, columns col (a compact numbering that keeps
// the global order, ascending within each row) and values val.
//
// Problem p of a batch is own row i: its pattern J is the local rows
// pat[patptr[p]:patptr[p+1]] (ascending; n of them), its diagonal column
// diag0 + p. Its entries are the entries of the rows of J, row by row in
// J's order: T of them. I is the sorted set of their columns (m of them),
// the block C = A(J,I)' is m x n, column-major, column q holding row J[q],
// and the right-hand side is e_i(I): what the host's worker.block builds.
// spai_qr_warp solves it (spai_qr.cu); row i of M, n values, goes to
// out[patptr[p]:patptr[p+1]].
//
// A problem's workspace holds C, b (m), the QR's norms and rdiag (n each)
// as doubles, then each entry's code (T) and I (m) as ints:
// spai_workspace bytes (cudaspai.workspace computes the same). It lies in
// a slot of shared memory (spai_solve_shared) or in global memory
// (spai_solve_scratch), as the host chooses from the sizes that
// spai_count finds.

// SPAI_SOLVED, SPAI_DEPENDENT and SPAI_NO_DIAGONAL are a problem's status:
// solved, a block with dependent columns, no row of J with an entry in
// column i. The host sets every status to -1 first, which stays where no
// kernel solved the problem.
#define SPAI_SOLVED 0
#define SPAI_DEPENDENT 1
#define SPAI_NO_DIAGONAL 2

// spai_workspace is the bytes of a problem's workspace (see above).
__device__ long long spai_workspace(int m, int n, int t)
{
    return 8LL * ((long long)m * n + m + 2LL * n) + 4LL * ((long long)t + m);
}

// spai_warp is the index of the thread's warp in the grid; spai_warps is
// the number of warps of the grid.
__device__ __forceinline__ long long spai_warp() { return ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; }
__device__ __forceinline__ long long spai_warps() { return ((long long)gridDim.x * blockDim.x) >> 5; }

// spai_entries is T, the entries of the n rows pat, summed by the warp:
// every lane returns it.
__device__ int spai_entries(const long long *rowptr, const int *pat, int n)
{
    int t = 0;
    for (int q = threadIdx.x & 31; q < n; q += 32)
        t += (int)(rowptr[pat[q] + 1] - rowptr[pat[q]]);
    for (int off = 16; off > 0; off >>= 1)
        t += __shfl_xor_sync(FSAI_FULL, t, off);
    return t;
}

// SpaiCursor walks a problem's entries in order with growing t: entry t is
// entry t - base of row q of the pattern.
struct SpaiCursor {
    int q, base;
};

// spai_entry moves the cursor to entry t (t at least the last one's) and
// returns its index in col and val.
__device__ long long spai_entry(SpaiCursor *cur, const long long *rowptr, const int *pat, int t)
{
    for (;;) {
        const long long start = rowptr[pat[cur->q]];
        const int len = (int)(rowptr[pat[cur->q] + 1] - start);
        if (t < cur->base + len)
            return start + (t - cur->base);
        cur->base += len;
        cur->q++;
    }
}

// spai_seen reports whether one of the rows pat[0:q] holds column c (a
// binary search in each).
__device__ bool spai_seen(const long long *rowptr, const int *col, const int *pat, int q, int c)
{
    for (int r = 0; r < q; r++) {
        long long lo = rowptr[pat[r]];
        const long long end = rowptr[pat[r] + 1];
        long long hi = end;
        while (lo < hi) {
            const long long mid = lo + ((hi - lo) >> 1);
            if (col[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < end && col[lo] == c)
            return true;
    }
    return false;
}

// spai_count writes m = |I| and T of every problem to counts[2p] and
// counts[2p + 1]: the sizes its workspace takes. One warp per problem.
extern "C" __global__ void spai_count(int nprob, const long long *__restrict__ rowptr, const int *__restrict__ col,
                                      const long long *__restrict__ patptr, const int *__restrict__ pat,
                                      int *__restrict__ counts)
{
    const int lane = threadIdx.x & 31;
    for (long long p = spai_warp(); p < nprob; p += spai_warps()) {
        const int *jp = pat + patptr[p];
        const int n = (int)(patptr[p + 1] - patptr[p]);
        const int t = spai_entries(rowptr, jp, n);
        SpaiCursor cur = {0, 0};
        int m = 0;
        for (int e = lane; e < t; e += 32) {
            const long long k = spai_entry(&cur, rowptr, jp, e);
            m += !spai_seen(rowptr, col, jp, cur.q, col[k]);
        }
        for (int off = 16; off > 0; off >>= 1)
            m += __shfl_xor_sync(FSAI_FULL, m, off);
        if (lane == 0) {
            counts[2 * p] = m;
            counts[2 * p + 1] = t;
        }
    }
}

// spai_build_solve builds the problem of the n pattern rows jp, with m
// columns, t entries and diagonal column diag, in the workspace ws (8-byte
// aligned, spai_workspace(m, n, t) bytes), solves it and writes its n
// values to out; it returns the problem's status. The whole warp calls it.
__device__ int spai_build_solve(const long long *__restrict__ rowptr, const int *__restrict__ col,
                                const double *__restrict__ val, const int *jp, int n, int m, int t, int diag,
                                char *ws, double *out)
{
    const int lane = threadIdx.x & 31;
    double *c = (double *)ws;
    double *b = c + (long long)m * n;
    double *norms = b + m, *rdiag = norms + n;
    int *code = (int *)(rdiag + n), *cols = code + t;
    __syncwarp(); // the warp's last problem in this workspace is done
    const long long dense = (long long)m * n + m;
    for (long long k = lane; k < dense; k += 32)
        c[k] = 0;
    // each entry's code: its column, or -1 - its column where a row before
    // its own holds that column
    SpaiCursor cur = {0, 0};
    for (int e = lane; e < t; e += 32) {
        const int cc = col[spai_entry(&cur, rowptr, jp, e)];
        code[e] = spai_seen(rowptr, col, jp, cur.q, cc) ? -1 - cc : cc;
    }
    __syncwarp();
    // I: each column at its rank among the first occurrences
    for (int e = lane; e < t; e += 32) {
        const int cc = code[e];
        if (cc < 0)
            continue;
        int r = 0;
        for (int u = 0; u < t; u++)
            r += code[u] >= 0 && code[u] < cc;
        cols[r] = cc;
    }
    __syncwarp();
    // the block and e_diag(I)
    int found = 0;
    cur.q = cur.base = 0;
    for (int e = lane; e < t; e += 32) {
        const long long k = spai_entry(&cur, rowptr, jp, e);
        const int cc = col[k];
        int lo = 0, hi = m;
        while (lo < hi) {
            const int mid = lo + ((hi - lo) >> 1);
            if (cols[mid] < cc)
                lo = mid + 1;
            else
                hi = mid;
        }
        c[(long long)cur.q * m + lo] = val[k];
        if (cc == diag) {
            b[lo] = 1;
            found = 1;
        }
    }
    found = __any_sync(FSAI_FULL, found);
    __syncwarp();
    if (!found)
        return SPAI_NO_DIAGONAL;
    if (spai_qr_warp(m, n, c, b, norms, rdiag))
        return SPAI_DEPENDENT;
    for (int q = lane; q < n; q += 32)
        out[q] = b[q];
    return SPAI_SOLVED;
}

// spai_solve_shared solves the problems whose workspace fits slot bytes,
// each warp of a block in its own slot of the dynamic shared memory
// (blockDim.x / 32 slots); it leaves the others, whose status stays -1, to
// spai_solve_scratch.
extern "C" __global__ void __launch_bounds__(32 * 16) spai_solve_shared(int nprob, int slot, const long long *__restrict__ rowptr,
                                             const int *__restrict__ col, const double *__restrict__ val,
                                             const long long *__restrict__ patptr, const int *__restrict__ pat,
                                             const int *__restrict__ counts, int diag0, double *__restrict__ out,
                                             int *__restrict__ status)
{
    extern __shared__ double spai_slots[];
    char *ws = (char *)spai_slots + (threadIdx.x >> 5) * slot;
    for (long long p = spai_warp(); p < nprob; p += spai_warps()) {
        const int n = (int)(patptr[p + 1] - patptr[p]);
        const int m = counts[2 * p], t = counts[2 * p + 1];
        if (spai_workspace(m, n, t) > slot)
            continue;
        const int s = spai_build_solve(rowptr, col, val, pat + patptr[p], n, m, t, diag0 + (int)p, ws,
                                       out + patptr[p]);
        if ((threadIdx.x & 31) == 0)
            status[p] = s;
    }
}

// spai_solve_scratch solves the nlist problems list[k], problem list[k]
// in the workspace at scratch + woff[k] bytes (8-byte aligned).
extern "C" __global__ void spai_solve_scratch(int nlist, const int *__restrict__ list,
                                              const long long *__restrict__ woff, double *scratch,
                                              const long long *__restrict__ rowptr, const int *__restrict__ col,
                                              const double *__restrict__ val, const long long *__restrict__ patptr,
                                              const int *__restrict__ pat, const int *__restrict__ counts, int diag0,
                                              double *__restrict__ out, int *__restrict__ status)
{
    for (long long k = spai_warp(); k < nlist; k += spai_warps()) {
        const int p = list[k];
        const int n = (int)(patptr[p + 1] - patptr[p]);
        const int m = counts[2 * (long long)p], t = counts[2 * (long long)p + 1];
        const int s = spai_build_solve(rowptr, col, val, pat + patptr[p], n, m, t, diag0 + p,
                                       (char *)scratch + woff[k], out + patptr[p]);
        if ((threadIdx.x & 31) == 0)
            status[p] = s;
    }
}
