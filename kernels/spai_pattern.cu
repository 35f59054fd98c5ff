// The pattern of M at k = 1 and M's diagonal block, made on the GPU
// (spai/cudaspai) from the rank's local system in device memory, in the
// layout of spai_solve.cu (rowptr, col, val: CSR of the local rows, compact
// columns that keep the global order). One thread per own row.
//
// Own row i is local row below + i; its diagonal is compact column
// diag0 + i. A compact column c is a row of the system: in the own range
// [diag0, diag0 + n) the local row below + c - diag0, else the local row
// frow[c < diag0 ? c : c - n] of the foreign column (-1: a column whose
// row the system does not hold).

// spai_column_row returns the local row of compact column c, or -1.
__device__ __forceinline__ int spai_column_row(int c, int n, int below, int diag0, const int *__restrict__ frow)
{
    if (c >= diag0 && c - diag0 < n)
        return below + (c - diag0);
    return frow[c < diag0 ? c : c - n];
}

// spai_bound is (1 - tau) times the largest magnitude of the entries
// [a, b) of val: an entry is kept when its magnitude exceeds it, as the
// host's spai.kept decides.
__device__ double spai_bound(const double *__restrict__ val, long long a, long long b, double tau)
{
    double m = 0;
    for (long long e = a; e < b; e++)
        m = fmax(m, fabs(val[e]));
    return (1 - tau) * m;
}

// spai_pattern_count writes the length of own row i's pattern at k = 1
// (its kept columns and its diagonal, stored or not) to len[i + 1], and
// lowers *bad to i where a kept column's row is not in the system (the
// host then names the error).
extern "C" __global__ void spai_pattern_count(int n, const long long *__restrict__ rowptr, const int *__restrict__ col,
                                              const double *__restrict__ val, int below, int diag0, double tau,
                                              const int *__restrict__ frow, int *__restrict__ len, int *bad)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        const long long a = rowptr[below + i], b = rowptr[below + i + 1];
        const double bound = spai_bound(val, a, b, tau);
        const int diag = diag0 + (int)i;
        int count = 1; // the diagonal
        for (long long e = a; e < b; e++) {
            const int c = col[e];
            if (c == diag || !(fabs(val[e]) > bound))
                continue;
            if (spai_column_row(c, n, below, diag0, frow) < 0)
                atomicMin(bad, (int)i);
            else
                count++;
        }
        len[i + 1] = count;
    }
}

// spai_pattern_fill writes own row i's pattern, the local rows of its kept
// columns and its diagonal, ascending, to pat[off[i]:off[i + 1]] (off: the
// prefix sum of spai_pattern_count's lengths).
extern "C" __global__ void spai_pattern_fill(int n, const long long *__restrict__ rowptr, const int *__restrict__ col,
                                             const double *__restrict__ val, int below, int diag0, double tau,
                                             const int *__restrict__ frow, const int *__restrict__ off,
                                             int *__restrict__ pat)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        const long long a = rowptr[below + i], b = rowptr[below + i + 1];
        const double bound = spai_bound(val, a, b, tau);
        const int diag = diag0 + (int)i;
        int w = off[i], placed = 0;
        for (long long e = a; e < b; e++) {
            const int c = col[e];
            if (c != diag && !(fabs(val[e]) > bound))
                continue;
            if (!placed && c >= diag) { // the diagonal, in its place
                pat[w++] = below + (int)i;
                placed = 1;
                if (c == diag)
                    continue;
            }
            const int r = spai_column_row(c, n, below, diag0, frow);
            if (r >= 0)
                pat[w++] = r;
        }
        if (!placed)
            pat[w] = below + (int)i;
    }
}

// spai_widen sets wide[k] = narrow[k] for the n entries.
extern "C" __global__ void spai_widen(long long n, const int *__restrict__ narrow, long long *__restrict__ wide)
{
    for (long long k = fsai_tid(); k < n; k += fsai_stride())
        wide[k] = narrow[k];
}

// spai_split_count counts the entries of own row i of M (pattern
// pat[patptr[i]:patptr[i + 1]], local rows) in own columns, the local rows
// [below, below + n), to dlen[i + 1], and the others to olen[i + 1].
extern "C" __global__ void spai_split_count(int n, const long long *__restrict__ patptr, const int *__restrict__ pat,
                                            int below, int *__restrict__ dlen, int *__restrict__ olen)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        int d = 0;
        const long long a = patptr[i], b = patptr[i + 1];
        for (long long e = a; e < b; e++)
            d += pat[e] >= below && pat[e] - below < n;
        dlen[i + 1] = d;
        olen[i + 1] = (int)(b - a) - d;
    }
}

// spai_split_fill splits the rows of M, values out in pattern order, into
// the diagonal block (row pointers doff, columns dcol numbered from the
// first own row, values dval) and the other entries (row pointers ooff,
// values oval, columns ocol: the index among the system's collected rows,
// which are the local rows below the own ones and those above).
extern "C" __global__ void spai_split_fill(int n, const long long *__restrict__ patptr, const int *__restrict__ pat,
                                           const double *__restrict__ out, int below, const int *__restrict__ doff,
                                           int *__restrict__ dcol, double *__restrict__ dval,
                                           const int *__restrict__ ooff, int *__restrict__ ocol,
                                           double *__restrict__ oval)
{
    for (long long i = fsai_tid(); i < n; i += fsai_stride()) {
        int d = doff[i], o = ooff[i];
        for (long long e = patptr[i]; e < patptr[i + 1]; e++) {
            const int r = pat[e];
            if (r >= below && r - below < n) {
                dcol[d] = r - below;
                dval[d++] = out[e];
            } else {
                ocol[o] = r < below ? r : r - n;
                oval[o++] = out[e];
            }
        }
    }
}
