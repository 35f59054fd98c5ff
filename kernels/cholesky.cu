// Batched dense Cholesky of the adaptive FSAI (paper 001 section 3, third
// kernel), one thread per batch row: rows are independent and their systems
// small (at most Steps * StepSize), and with the structure-of-arrays layout
// of fsai.cuh the threads of a warp read and write consecutive words.
//
// The factor is built as on the CPU (afsai/factor.go): each new column j
// borders L with one row, found by forward substitution against the
// gathered A[j,P], so a step costs O(m^2) per row rather than refactoring
// A[P,P]; y gains one entry and psi drops by its square. Same operations,
// same order, same breakdown tests: a pivot or psi not above tol times a_jj
// or a_ii stops the row with the columns before the failing one.

// fsai_init starts every batch row with the empty pattern: psi = a_ii; a row
// already within the tolerance (Eps >= 1) is done.
extern "C" __global__ void fsai_init(const FsaiSetup S)
{
    for (long long k = fsai_tid(); k < S.nb; k += fsai_stride()) {
        const float psi = S.diag[S.rows[k]];
        S.len[k] = 0;
        S.ncand[k] = 0;
        S.psi[k] = psi;
        S.state[k] = (double)psi > __dmul_rn(S.eps, (double)psi) ? FSAI_ACTIVE : FSAI_DONE;
    }
}

// FsaiRow is a row's progress through a step of the bordered Cholesky.
struct FsaiRow {
    float psi0;   // a_ii
    float before; // psi before the step
    float psi;
    int nc;       // the step's picks
    int m;        // the pattern's length
    bool broken;
};

// fsai_start starts row k's step.
__device__ __forceinline__ FsaiRow fsai_start(const FsaiSetup &S, long long k)
{
    FsaiRow R;
    R.psi0 = S.diag[S.rows[k]];
    R.nc = S.ncand[k];
    R.m = S.len[k];
    R.before = S.psi[k];
    R.psi = R.before;
    R.broken = false;
    return R;
}

// fsai_pick returns the gathered column of row k's pick t (entry r at
// [r * nb]) and its column j, and starts d = a_jj and yt = A[j,i].
__device__ __forceinline__ float *fsai_pick(const FsaiSetup &S, long long k, const FsaiRow &R, int t, int *j, float *d,
                                            float *yt)
{
    float *col = S.sys + t * (S.mmax + 1) * S.nb + k;
    *j = S.pat[R.m * S.nb + k];
    *d = S.diag[*j];
    *yt = col[S.mmax * S.nb];
    return col;
}

// fsai_accept finishes new column j of row R once its entries below the
// diagonal are known: d = a_jj minus their squares and yt = A[j,i] minus
// their products with y. It applies the breakdown tests, in double as on
// the CPU, and gives the new diagonal entry of L, y's new entry and psi
// after the column; false means the row breaks down before the column.
__device__ __forceinline__ bool fsai_accept(const FsaiSetup &S, int j, float d, float yt, const FsaiRow &R, float *ljj,
                                            float *yj, float *next)
{
    if (!((double)d > __dmul_rn(S.tol, (double)S.diag[j])))
        return false;
    *ljj = __double2float_rn(__dsqrt_rn((double)d));
    *yj = __fdiv_rn(yt, *ljj);
    *next = __fsub_rn(R.psi, __fmul_rn(*yj, *yj));
    return (double)*next > __dmul_rn(S.tol, (double)R.psi0);
}

// fsai_finish records row k after a step: its pattern length and psi, and
// its state by the stopping tests, psi / psi_0 <= Eps and a decrease of psi
// by less than Stall times its value before the step, both in double as on
// the CPU; a row still active is counted, and listed in next when the step
// has a list to write.
__device__ __forceinline__ void fsai_finish(const FsaiSetup &S, long long k, const FsaiRow &R)
{
    S.len[k] = R.m;
    S.psi[k] = R.psi;
    if (R.broken)
        S.state[k] = FSAI_BROKEN;
    else if (!((double)R.psi > __dmul_rn(S.eps, (double)R.psi0)) ||
             (double)__fsub_rn(R.before, R.psi) < __dmul_rn(S.stall, (double)R.before))
        S.state[k] = FSAI_DONE;
    else {
        const int at = atomicAdd(S.active_count, 1);
        if (S.next)
            S.next[at] = (int)k;
    }
}

// fsai_border appends the step's picks to the factor of every active row, in
// pick order, one thread per row, then applies the stopping tests
// (fsai_finish).
extern "C" __global__ void fsai_border(const FsaiSetup S)
{
    const long long nb = S.nb, n = fsai_count(S);
    for (long long w = fsai_tid(); w < n; w += fsai_stride()) {
        const long long k = fsai_row(S, w);
        if (S.state[k] != FSAI_ACTIVE)
            continue;
        FsaiRow R = fsai_start(S, k);
        for (int t = 0; t < R.nc; t++) {
            int j;
            float d, yt;
            float *col = fsai_pick(S, k, R, t, &j, &d, &yt);
            for (int r = 0; r < R.m; r++) {
                const long long lr = fsai_tri(r);
                float s = col[r * nb];
                for (int q = 0; q < r; q++)
                    s = __fsub_rn(s, __fmul_rn(S.L[(lr + q) * nb + k], col[q * nb]));
                s = __fdiv_rn(s, S.L[(lr + r) * nb + k]);
                col[r * nb] = s;
                d = __fsub_rn(d, __fmul_rn(s, s));
                yt = __fsub_rn(yt, __fmul_rn(s, S.y[r * nb + k]));
            }
            float ljj, yj, next;
            if (!fsai_accept(S, j, d, yt, R, &ljj, &yj, &next)) {
                R.broken = true;
                break;
            }
            const long long lm = fsai_tri(R.m);
            for (int q = 0; q < R.m; q++)
                S.L[(lm + q) * nb + k] = col[q * nb];
            S.L[(lm + R.m) * nb + k] = ljj;
            S.y[R.m * nb + k] = yj;
            R.psi = next;
            R.m++;
        }
        fsai_finish(S, k, R);
    }
}

// FSAI_WARP_MMAX is the longest pattern of the one-warp-per-row kernels
// below: a lane holds entries lane and lane + 32 of a row's vectors.
#define FSAI_WARP_MMAX 64

// fsai_border_warp is fsai_border with one warp per row, for the steps that
// work on a list of active rows, whose rows lie scattered in the batch and
// are few but long: a thread per row would run its O(m^2) substitution
// alone, one scattered load after the other. The warp substitutes column by
// column (right-looking): once entry q of the new column is final, every
// later entry r subtracts L[r,q] times it. Entry r receives the same terms
// in the same order as fsai_border's dot product, so the result is the
// same bit for bit. The patterns are at most FSAI_WARP_MMAX long.
extern "C" __global__ void fsai_border_warp(const FsaiSetup S)
{
    const int lane = threadIdx.x & 31;
    const long long nb = S.nb, n = fsai_count(S), warps = fsai_stride() >> 5;
    for (long long w = fsai_tid() >> 5; w < n; w += warps) { // the same w on the warp's lanes
        const long long k = fsai_row(S, w);
        if (S.state[k] != FSAI_ACTIVE)
            continue;
        FsaiRow R = fsai_start(S, k);
        for (int t = 0; t < R.nc; t++) {
            int j;
            float d, yt;
            const float *col = fsai_pick(S, k, R, t, &j, &d, &yt);
            const int m = R.m, r0 = lane, r1 = lane + 32; // the entries this lane holds
            float c0 = r0 < m ? col[r0 * nb] : 0.0f, c1 = r1 < m ? col[r1 * nb] : 0.0f;
            for (int q = 0; q < m; q++) {
                float x = __shfl_sync(FSAI_FULL, q < 32 ? c0 : c1, q & 31);
                x = __fdiv_rn(x, S.L[(fsai_tri(q) + q) * nb + k]);
                d = __fsub_rn(d, __fmul_rn(x, x));
                yt = __fsub_rn(yt, __fmul_rn(x, S.y[q * nb + k]));
                if (r0 == q)
                    c0 = x;
                else if (q < r0 && r0 < m)
                    c0 = __fsub_rn(c0, __fmul_rn(S.L[(fsai_tri(r0) + q) * nb + k], x));
                if (r1 == q)
                    c1 = x;
                else if (q < r1 && r1 < m)
                    c1 = __fsub_rn(c1, __fmul_rn(S.L[(fsai_tri(r1) + q) * nb + k], x));
            }
            float ljj, yj, next;
            if (!fsai_accept(S, j, d, yt, R, &ljj, &yj, &next)) {
                R.broken = true;
                break;
            }
            const long long lm = fsai_tri(m);
            if (r0 < m)
                S.L[(lm + r0) * nb + k] = c0;
            if (r1 < m)
                S.L[(lm + r1) * nb + k] = c1;
            if (lane == 0) {
                S.L[(lm + m) * nb + k] = ljj;
                S.y[m * nb + k] = yj;
            }
            R.psi = next;
            R.m++;
        }
        if (lane == 0)
            fsai_finish(S, k, R);
    }
}

// fsai_solve computes g = -L'^-1 y, the off-diagonal part of the unscaled
// row, for the active rows, or for all rows when all is set (the final
// solve), one thread per row. The lanes of a warp step through the rows of
// L together, from the longest pattern among them down, so that they read
// the same entry of their rows at once: adjacent words of the structure of
// arrays.
extern "C" __global__ void fsai_solve(const FsaiSetup S, int all)
{
    const long long nb = S.nb, n = all ? nb : fsai_count(S);
    const int lane = threadIdx.x & 31;
    for (long long base = fsai_tid() - lane; base < n; base += fsai_stride()) { // the warp's lanes together
        const long long t = base + lane;
        long long k = 0;
        int m = 0;
        if (t < n) {
            k = all ? t : fsai_row(S, t);
            if (all || S.state[k] == FSAI_ACTIVE)
                m = S.len[k];
        }
        int longest = m;
        for (int off = 16; off > 0; off >>= 1)
            longest = max(longest, __shfl_xor_sync(FSAI_FULL, longest, off));
        for (int r = 0; r < m; r++)
            S.g[r * nb + k] = -S.y[r * nb + k];
        for (int r = longest - 1; r >= 0; r--) {
            if (r >= m)
                continue;
            const long long lr = fsai_tri(r);
            const float gr = __fdiv_rn(S.g[r * nb + k], S.L[(lr + r) * nb + k]);
            S.g[r * nb + k] = gr;
            for (int q = 0; q < r; q++)
                S.g[q * nb + k] = __fsub_rn(S.g[q * nb + k], __fmul_rn(S.L[(lr + q) * nb + k], gr));
        }
    }
}

// fsai_solve_warp is fsai_solve with one warp per row (see
// fsai_border_warp): once g's entry r is final, every earlier entry q
// subtracts L[r,q] times it, as fsai_solve does, in the same order.
extern "C" __global__ void fsai_solve_warp(const FsaiSetup S, int all)
{
    const int lane = threadIdx.x & 31;
    const long long nb = S.nb, n = all ? nb : fsai_count(S), warps = fsai_stride() >> 5;
    for (long long w = fsai_tid() >> 5; w < n; w += warps) {
        const long long k = all ? w : fsai_row(S, w);
        if (!all && S.state[k] != FSAI_ACTIVE)
            continue;
        const int m = S.len[k], q0 = lane, q1 = lane + 32;
        float g0 = q0 < m ? -S.y[q0 * nb + k] : 0.0f, g1 = q1 < m ? -S.y[q1 * nb + k] : 0.0f;
        for (int r = m - 1; r >= 0; r--) {
            const long long lr = fsai_tri(r);
            const float gr = __fdiv_rn(__shfl_sync(FSAI_FULL, r < 32 ? g0 : g1, r & 31), S.L[(lr + r) * nb + k]);
            if (q0 == r)
                g0 = gr;
            else if (q0 < r)
                g0 = __fsub_rn(g0, __fmul_rn(S.L[(lr + q0) * nb + k], gr));
            if (q1 == r)
                g1 = gr;
            else if (q1 < r)
                g1 = __fsub_rn(g1, __fmul_rn(S.L[(lr + q1) * nb + k], gr));
        }
        if (q0 < m)
            S.g[q0 * nb + k] = g0;
        if (q1 < m)
            S.g[q1 * nb + k] = g1;
    }
}
