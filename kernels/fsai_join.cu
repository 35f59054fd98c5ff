// Joining a rank's local system on the device (package gpu, fsai_join.go).
//
// The FSAI set-up of a rank reads its local system: the rows it received
// from lower ranks, then its own rows. Most of it is A's diagonal block,
// which the rank holds already; the host assembles only the border (the
// received rows, and the own rows' entries in the received rows' columns)
// and both parts come to the device as they are, one after the other:
//
//   ptrs: border row pointers [m+1], then the block's [m-own+1]
//   cols: border columns [ptrs[m]], then the block's (numbered from 0)
//   vals: the same for the values
//
// Row i of the system is border row i followed, from own on, by row i-own
// of the block with its columns shifted by own: the border's entries of an
// own row lie left of own, so the row stays sorted. One thread per row
// writes the row, its pointer and its diagonal entry (afsai.checkInput's
// diagonal), and lowers *bad to the row when that entry is not positive and
// finite (the host sets *bad to m first).

extern "C" __global__ void fsai_join(int m, int own, const int *__restrict__ ptrs, const int *__restrict__ cols,
                                     const float *__restrict__ vals, int *__restrict__ rowptr,
                                     int *__restrict__ col, float *__restrict__ val, float *__restrict__ diag,
                                     int *__restrict__ bad)
{
    const int *dptr = ptrs + m + 1;
    const int bnnz = ptrs[m];
    const int *dcol = cols + bnnz;
    const float *dval = vals + bnnz;
    for (long long t = fsai_tid(); t < m; t += fsai_stride()) {
        const int i = (int)t;
        int d0 = 0, d1 = 0;
        if (i >= own) {
            d0 = dptr[i - own];
            d1 = dptr[i - own + 1];
        }
        int at = ptrs[i] + d0;
        rowptr[i] = at;
        if (i == m - 1)
            rowptr[m] = ptrs[m] + d1;
        float d = 0.0f;
        for (int k = ptrs[i]; k < ptrs[i + 1]; k++, at++) {
            col[at] = cols[k];
            val[at] = vals[k];
            if (cols[k] == i)
                d = vals[k];
        }
        for (int k = d0; k < d1; k++, at++) {
            const int c = dcol[k] + own;
            col[at] = c;
            val[at] = dval[k];
            if (c == i)
                d = dval[k];
        }
        diag[i] = d;
        if (!(d > 0.0f) || isinf(d))
            atomicMin(bad, i);
    }
}
