// Joining a rank's local system on the device (package gpu, fsai_join.go).
//
// The FSAI set-up of a rank reads its local system: the rows it received
// from lower ranks, then its own rows. Most of it is A's diagonal block,
// which the rank holds already; the host assembles only the border (the
// received rows, and the own rows' entries in the received rows' columns).
// The two parts are read where they are:
//
//   bptr, bcol, bval: the border, m x m in CSR, float32 values
//   dptr, dcol, dval: the block, (m-own) x (m-own), its columns numbered
//                     from 0, values float32 or float64: uploaded by the
//                     set-up, or the bound operator's diagonal block
//
// Row i of the system is border row i followed, from own on, by row i-own
// of the block with its columns shifted by own: the border's entries of an
// own row lie left of own, so the row stays sorted. One thread per row
// writes the row, its pointer and its diagonal entry (afsai.checkInput's
// diagonal), the block's values rounded to float32 as the host rounds them,
// and lowers *bad to the row when that entry is not positive and finite
// (the host sets *bad to m first). An own row also writes its index into
// rows, the list of the rows the set-up computes, unless rows is NULL (a
// set-up of some of the own rows, which the host lists).

template <typename T>
__device__ __forceinline__ void fsai_join(int m, int own, const int *__restrict__ bptr,
                                          const int *__restrict__ bcol, const float *__restrict__ bval,
                                          const int *__restrict__ dptr, const int *__restrict__ dcol,
                                          const T *__restrict__ dval, int *__restrict__ rowptr,
                                          int *__restrict__ col, float *__restrict__ val,
                                          float *__restrict__ diag, int *__restrict__ bad,
                                          int *__restrict__ rows)
{
    for (long long t = fsai_tid(); t < m; t += fsai_stride()) {
        const int i = (int)t;
        int d0 = 0, d1 = 0;
        if (i >= own) {
            d0 = dptr[i - own];
            d1 = dptr[i - own + 1];
            if (rows)
                rows[i - own] = i;
        }
        int at = bptr[i] + d0;
        rowptr[i] = at;
        if (i == m - 1)
            rowptr[m] = bptr[m] + d1;
        float d = 0.0f;
        for (int k = bptr[i]; k < bptr[i + 1]; k++, at++) {
            col[at] = bcol[k];
            val[at] = bval[k];
            if (bcol[k] == i)
                d = bval[k];
        }
        for (int k = d0; k < d1; k++, at++) {
            const int c = dcol[k] + own;
            const float v = (float)dval[k]; // round to nearest even, as Go's float32()
            col[at] = c;
            val[at] = v;
            if (c == i)
                d = v;
        }
        diag[i] = d;
        if (!(d > 0.0f) || isinf(d))
            atomicMin(bad, i);
    }
}

#define FSAI_JOIN(name, T)                                                                             \
    extern "C" __global__ void name(int m, int own, const int *bptr, const int *bcol, const float *bval, \
                                    const int *dptr, const int *dcol, const T *dval, int *rowptr,      \
                                    int *col, float *val, float *diag, int *bad, int *rows)            \
    {                                                                                                  \
        fsai_join<T>(m, own, bptr, bcol, bval, dptr, dcol, dval, rowptr, col, val, diag, bad, rows);  \
    }

FSAI_JOIN(fsai_join_s, float)
FSAI_JOIN(fsai_join_d, double)
