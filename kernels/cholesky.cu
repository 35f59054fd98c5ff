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

// fsai_border appends the step's picks to the factor of every active row, in
// pick order, then applies the stopping tests, psi / psi_0 <= Eps and a
// decrease of psi by less than Stall times its value before the step, both
// in double as on the CPU, and counts the rows still active (and lists them
// in next when the step has a list to write).
extern "C" __global__ void fsai_border(const FsaiSetup S)
{
    const long long nb = S.nb, n = fsai_count(S);
    for (long long w = fsai_tid(); w < n; w += fsai_stride()) {
        const long long k = fsai_row(S, w);
        if (S.state[k] != FSAI_ACTIVE)
            continue;
        const float psi0 = S.diag[S.rows[k]];
        const int nc = S.ncand[k];
        int m = S.len[k];
        const float before = S.psi[k];
        float psi = before;
        bool broken = false;
        for (int t = 0; t < nc; t++) {
            const int j = S.pat[m * nb + k];
            float *col = S.sys + t * (S.mmax + 1) * nb + k; // entry r at col[r * nb]
            float d = S.diag[j], yt = col[S.mmax * nb];
            for (int r = 0; r < m; r++) {
                const long long lr = fsai_tri(r);
                float s = col[r * nb];
                for (int q = 0; q < r; q++)
                    s = __fsub_rn(s, __fmul_rn(S.L[(lr + q) * nb + k], col[q * nb]));
                s = __fdiv_rn(s, S.L[(lr + r) * nb + k]);
                col[r * nb] = s;
                d = __fsub_rn(d, __fmul_rn(s, s));
                yt = __fsub_rn(yt, __fmul_rn(s, S.y[r * nb + k]));
            }
            if (!((double)d > __dmul_rn(S.tol, (double)S.diag[j]))) {
                broken = true;
                break;
            }
            const float ljj = __double2float_rn(__dsqrt_rn((double)d));
            const float yj = __fdiv_rn(yt, ljj);
            const float next = __fsub_rn(psi, __fmul_rn(yj, yj));
            if (!((double)next > __dmul_rn(S.tol, (double)psi0))) {
                broken = true;
                break;
            }
            const long long lm = fsai_tri(m);
            for (int q = 0; q < m; q++)
                S.L[(lm + q) * nb + k] = col[q * nb];
            S.L[(lm + m) * nb + k] = ljj;
            S.y[m * nb + k] = yj;
            psi = next;
            m++;
        }
        S.len[k] = m;
        S.psi[k] = psi;
        if (broken)
            S.state[k] = FSAI_BROKEN;
        else if (!((double)psi > __dmul_rn(S.eps, (double)psi0)) ||
                 (double)__fsub_rn(before, psi) < __dmul_rn(S.stall, (double)before))
            S.state[k] = FSAI_DONE;
        else {
            const int at = atomicAdd(S.active_count, 1);
            if (S.next)
                S.next[at] = (int)k;
        }
    }
}

// fsai_solve computes g = -L'^-1 y, the off-diagonal part of the unscaled
// row, for the active rows, or for all rows when all is set (the final
// solve).
extern "C" __global__ void fsai_solve(const FsaiSetup S, int all)
{
    const long long nb = S.nb, n = all ? nb : fsai_count(S);
    for (long long t = fsai_tid(); t < n; t += fsai_stride()) {
        const long long k = all ? t : fsai_row(S, t);
        if (!all && S.state[k] != FSAI_ACTIVE)
            continue;
        const int m = S.len[k];
        for (int r = 0; r < m; r++)
            S.g[r * nb + k] = -S.y[r * nb + k];
        for (int r = m - 1; r >= 0; r--) {
            const long long lr = fsai_tri(r);
            const float gr = __fdiv_rn(S.g[r * nb + k], S.L[(lr + r) * nb + k]);
            S.g[r * nb + k] = gr;
            for (int q = 0; q < r; q++)
                S.g[q * nb + k] = __fsub_rn(S.g[q * nb + k], __fmul_rn(S.L[(lr + q) * nb + k], gr));
        }
    }
}
