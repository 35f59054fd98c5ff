// G's rows computed in parts (package afsai, early.go; package gpu,
// fsai_rows.go). A rank computes most of its rows of G from A's diagonal
// block while it collects its neighbours' rows, and the rest once it has
// them. Each part is a CSR block of the rows it computed, listed in rows
// (own rows numbered from 0); the parts are joined into G's diagonal block.

// fsai_touches counts the rows of a part that are marked in flags, and its
// entries in marked columns (flags has nflags entries; rows and columns
// past it are not marked): a row computed from the diagonal block alone is
// exact unless it or its pattern reaches a row that the received rows'
// columns touch.
extern "C" __global__ void fsai_touches(int nrows, const int *__restrict__ rows, const int *__restrict__ rowptr,
                                        const int *__restrict__ col, int nflags,
                                        const unsigned char *__restrict__ flags, int *count)
{
    for (long long k = fsai_tid(); k < nrows; k += fsai_stride()) {
        int hits = rows[k] < nflags && flags[rows[k]];
        for (int e = rowptr[k]; e < rowptr[k + 1]; e++)
            hits += col[e] < nflags && flags[col[e]];
        if (hits)
            atomicAdd(count, hits);
    }
}

// fsai_rows_count writes the length of each row of a part at its place in
// the joined block's row pointers (outptr[r + 1] for row r; a prefix sum
// makes them pointers once every part has written its rows).
extern "C" __global__ void fsai_rows_count(int nrows, const int *__restrict__ rows, const int *__restrict__ rowptr,
                                           int *__restrict__ outptr)
{
    for (long long k = fsai_tid(); k < nrows; k += fsai_stride())
        outptr[rows[k] + 1] = rowptr[k + 1] - rowptr[k];
}

// fsai_rows_copy copies each row of a part to its place in the joined
// block.
extern "C" __global__ void fsai_rows_copy(int nrows, const int *__restrict__ rows, const int *__restrict__ rowptr,
                                          const int *__restrict__ col, const float *__restrict__ val,
                                          const int *__restrict__ outptr, int *__restrict__ outcol,
                                          float *__restrict__ outval)
{
    for (long long k = fsai_tid(); k < nrows; k += fsai_stride()) {
        int at = outptr[rows[k]];
        for (int e = rowptr[k]; e < rowptr[k + 1]; e++, at++) {
            outcol[at] = col[e];
            outval[at] = val[e];
        }
    }
}
