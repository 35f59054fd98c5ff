// Joining a rank's SPAI local system on the device (spai/cudaspai,
// join.go), in the layout of spai_solve.cu: rowptr (rows + 1), col and val,
// CSR of the local rows (the collected rows below the own rows, the own
// rows, the collected rows above), compact columns that keep the global
// order (the own range's columns are colbelow + c for the own column c).
//
// Most of the system is A's diagonal block, which the rank's operator
// holds on the device already; the host uploads only the border:
//
//   hptr, hcol, hval: the collected rows, ascending (below ones, then above
//                     ones), whole, in compact columns: held row k is
//                     entries hptr[k]:hptr[k + 1]
//   erows, eptr, ecol, eval: the own rows' entries in other ranks'
//                     columns: the ne own rows that hold any (ascending),
//                     row erows[k]'s entries eptr[k]:eptr[k + 1], in
//                     compact columns, ascending
//   dptr, dcol, dval: the diagonal block, n x n, columns numbered from 0,
//                     values double, or float where float holds them
//                     exactly (the bound operator's block)
//
// Own row i is the border's entries of it in columns below colbelow, then
// the block's row i, then the rest of the border's entries: the compact
// columns keep the global order, so the row stays sorted, and it is the
// row the host translates. Values are copied, never rounded. One thread
// per local row writes its pointer and its entries; thread rows writes
// rowptr[rows]. Offsets are 64-bit: the system may pass 2^31 entries.

// spai_edge_rank returns how many of the ne ascending rows erows are below
// i.
__device__ __forceinline__ int spai_edge_rank(const int *__restrict__ erows, int ne, int i)
{
    int lo = 0, hi = ne;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (erows[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// spai_copy_held copies held row k to the entries from at.
__device__ __forceinline__ void spai_copy_held(int k, long long at, const long long *__restrict__ hptr,
                                               const int *__restrict__ hcol, const double *__restrict__ hval,
                                               int *__restrict__ col, double *__restrict__ val)
{
    for (long long e = hptr[k]; e < hptr[k + 1]; e++, at++) {
        col[at] = hcol[e];
        val[at] = hval[e];
    }
}

template <typename T>
__device__ __forceinline__ void spai_join(int rows, int below, int n, int colbelow, const long long *__restrict__ hptr,
                                          const int *__restrict__ hcol, const double *__restrict__ hval, int ne,
                                          const int *__restrict__ erows, const long long *__restrict__ eptr,
                                          const int *__restrict__ ecol, const double *__restrict__ eval,
                                          const int *__restrict__ dptr, const int *__restrict__ dcol,
                                          const T *__restrict__ dval, long long *__restrict__ rowptr,
                                          int *__restrict__ col, double *__restrict__ val)
{
    const long long dnnz = dptr[n], enn = eptr[ne];
    for (long long t = fsai_tid(); t <= rows; t += fsai_stride()) {
        const int r = (int)t;
        if (r == rows) {
            rowptr[rows] = hptr[rows - n] + enn + dnnz;
            continue;
        }
        if (r < below) {
            rowptr[r] = hptr[r];
            spai_copy_held(r, hptr[r], hptr, hcol, hval, col, val);
            continue;
        }
        if (r >= below + n) {
            const long long at = hptr[r - n] + enn + dnnz;
            rowptr[r] = at;
            spai_copy_held(r - n, at, hptr, hcol, hval, col, val);
            continue;
        }
        const int i = r - below;
        const int k = spai_edge_rank(erows, ne, i);
        long long at = hptr[below] + eptr[k] + dptr[i];
        rowptr[r] = at;
        long long e = eptr[k], end = e;
        if (k < ne && erows[k] == i)
            end = eptr[k + 1];
        for (; e < end && ecol[e] < colbelow; e++, at++) {
            col[at] = ecol[e];
            val[at] = eval[e];
        }
        for (int q = dptr[i]; q < dptr[i + 1]; q++, at++) {
            col[at] = colbelow + dcol[q];
            val[at] = (double)dval[q]; // exact: a float block holds A's values exactly
        }
        for (; e < end; e++, at++) {
            col[at] = ecol[e];
            val[at] = eval[e];
        }
    }
}

#define SPAI_JOIN(name, T)                                                                                           \
    extern "C" __global__ void name(int rows, int below, int n, int colbelow, const long long *hptr, const int *hcol, \
                                    const double *hval, int ne, const int *erows, const long long *eptr,             \
                                    const int *ecol, const double *eval, const int *dptr, const int *dcol,          \
                                    const T *dval, long long *rowptr, int *col, double *val)                        \
    {                                                                                                                \
        spai_join<T>(rows, below, n, colbelow, hptr, hcol, hval, ne, erows, eptr, ecol, eval, dptr, dcol, dval,      \
                     rowptr, col, val);                                                                              \
    }

SPAI_JOIN(spai_join_s, float)
SPAI_JOIN(spai_join_d, double)
