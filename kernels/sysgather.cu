// Systems gather of the adaptive FSAI (paper 001 section 3, second kernel):
// for every active row and every column j chosen by this step's gradient,
// the new row of the bordered system, A[j,P] over the pattern P grown by the
// step's earlier picks, and A[j,i].
//
// One thread per gathered entry, as in paper 000 section 4.3, but with a
// fixed stride instead of prefix sums: entry e = (t * width + p) * n + r is
// position p of pick t of the step's r-th row (of n, fsai_row), so
// consecutive threads serve consecutive rows and touch nearby words. width is the step's largest
// committed pattern length plus s: positions p < m + t are pattern columns,
// p = width - 1 is column i, the others have nothing to do. Each entry is
// found by a binary search of row j of A.

extern "C" __global__ void fsai_sysgather(const FsaiSetup S, int width)
{
    const long long nb = S.nb, n = fsai_count(S), total = S.s * width * n;
    for (long long e = fsai_tid(); e < total; e += fsai_stride()) {
        const long long k = fsai_row(S, e % n), tp = e / n;
        const int p = (int)(tp % width), t = (int)(tp / width);
        if (S.state[k] != FSAI_ACTIVE || t >= S.ncand[k])
            continue;
        const int m = S.len[k];
        int c;
        long long slot;
        if (p == width - 1) {
            c = S.rows[k];
            slot = S.mmax;
        } else if (p < m + t) {
            c = S.pat[p * nb + k];
            slot = p;
        } else {
            continue;
        }
        const int j = S.pat[(m + t) * nb + k];
        S.sys[(t * (S.mmax + 1) + slot) * nb + k] = fsai_entry(S, j, c);
    }
}

// fsai_sysgather_sorted gathers the systems of rows whose whole patterns
// are one step's picks in ascending order (static FSAI, fsai_pattern.cu):
// one thread per pick t (column j) of a row, which walks row j of A once
// beside the picks before it, both ascending, instead of a binary search
// per entry, writing A[j,P] (zero where A holds nothing) and A[j,i]. The
// entries are those fsai_sysgather writes.
extern "C" __global__ void fsai_sysgather_sorted(const FsaiSetup S)
{
    const long long nb = S.nb, total = S.s * nb;
    for (long long e = fsai_tid(); e < total; e += fsai_stride()) {
        const long long k = e % nb;
        const int t = (int)(e / nb);
        if (S.state[k] != FSAI_ACTIVE || t >= S.ncand[k])
            continue;
        const int i = S.rows[k], j = S.pat[t * nb + k];
        float *sys = S.sys + t * (S.mmax + 1) * nb + k;
        float aji = 0.0f;
        int p = 0, pc = t > 0 ? S.pat[k] : i; // the next pick before t, and its column
        for (int a = S.rowptr[j]; a < S.rowptr[j + 1]; a++) {
            const int c = S.col[a];
            for (; p < t && pc < c; pc = ++p < t ? S.pat[p * nb + k] : i)
                sys[p * nb] = 0.0f;
            if (p < t && pc == c) {
                sys[p * nb] = S.val[a];
                pc = ++p < t ? S.pat[p * nb + k] : i;
            } else if (c == i) {
                aji = S.val[a];
            }
            if (c >= i)
                break;
        }
        for (; p < t; p++)
            sys[p * nb] = 0.0f;
        sys[S.mmax * nb] = aji;
    }
}
