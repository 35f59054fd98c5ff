// Assembly of the FSAI rows: each batch row k becomes (g, 1) / sqrt(psi)
// in CSR, its pattern columns ascending and the diagonal last, as
// afsai/factor.go's row writes it. The scale and the products are
// evaluated in double and rounded to float, as on the CPU. Static FSAI's
// post-filtered rows have their values already (fsai_filter.cu). One thread per
// row; a column's place is the number of smaller columns in the pattern (no
// scratch, patterns are short).
//
// A rank keeps G's diagonal block on the device (package gpu,
// AdaptiveFactor): the columns from own on, renumbered from 0, go to the
// block at outptr[k], and the few columns before own, which other ranks own,
// to the left arrays at leftptr[k] (they come first: columns ascend). With
// own == 0 every entry goes to the block, in the local numbering, and the
// left arrays are not touched (NULL).

// fsai_left_count returns how many of row k's pattern columns lie before
// own.
__device__ __forceinline__ int fsai_left_count(const FsaiSetup &S, long long k, int own)
{
    const long long nb = S.nb;
    int n = 0;
    for (int p = 0; p < S.len[k]; p++)
        n += S.pat[p * nb + k] < own;
    return n;
}

// fsai_place returns how many of row k's first m pattern columns are
// smaller than c: c's place among them.
__device__ __forceinline__ int fsai_place(const FsaiSetup &S, long long k, int m, int c)
{
    int rank = 0;
    for (int q = 0; q < m; q++)
        rank += S.pat[q * S.nb + k] < c;
    return rank;
}

// fsai_entry returns row k's value of its pattern's column p, g_p /
// sqrt(psi), rounded as on the CPU (scale = 1/sqrt(psi) in double).
__device__ __forceinline__ float fsai_entry(const FsaiSetup &S, long long k, int p, double scale)
{
    return __double2float_rn(__dmul_rn((double)S.g[p * S.nb + k], scale));
}

// fsai_scale returns 1/sqrt(psi) of row k, in double.
__device__ __forceinline__ double fsai_scale(const FsaiSetup &S, long long k)
{
    return __ddiv_rn(1.0, __dsqrt_rn((double)S.psi[k]));
}

// fsai_value returns row k's value of its pattern's column p as G holds
// it: fsai_entry, or once post-filtered (S.gdiag set) g_p as it stands.
__device__ __forceinline__ float fsai_value(const FsaiSetup &S, long long k, int p, double scale)
{
    return S.gdiag ? S.g[p * S.nb + k] : fsai_entry(S, k, p, scale);
}

// fsai_diagonal returns row k's diagonal entry of G: 1/sqrt(psi) rounded,
// or the post-filter's.
__device__ __forceinline__ float fsai_diagonal(const FsaiSetup &S, long long k, double scale)
{
    return S.gdiag ? S.gdiag[k] : __double2float_rn(scale);
}

// fsai_kept_counts sizes a batch's rows for fsai_assemble when the rank
// keeps G's diagonal block: diagptr[1 + k] = row k's entries in the block
// (its pattern columns from own on, and the diagonal) and leftptr[1 + k] =
// its columns before own, with diagptr[0] = diagbase and leftptr[0] =
// leftbase, the entries of the batches before. Inclusive prefix sums of the
// nb + 1 entries then make them the rows' pointers. stats[0] gets the
// longest pattern and stats[1] the rows a breakdown stopped (integer
// atomics, one per warp: the same result in any order).
extern "C" __global__ void fsai_kept_counts(const FsaiSetup S, int own, int *__restrict__ diagptr, int diagbase,
                                            int *__restrict__ leftptr, int leftbase, int *__restrict__ stats)
{
    int longest = 0, broken = 0;
    for (long long k = fsai_tid(); k < S.nb; k += fsai_stride()) {
        const int m = S.len[k], left = fsai_left_count(S, k, own);
        diagptr[1 + k] = m + 1 - left;
        leftptr[1 + k] = left;
        longest = max(longest, m);
        broken += S.state[k] == FSAI_BROKEN;
        if (k == 0) {
            diagptr[0] = diagbase;
            leftptr[0] = leftbase;
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        longest = max(longest, __shfl_down_sync(0xffffffffu, longest, off));
        broken += __shfl_down_sync(0xffffffffu, broken, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&stats[0], longest);
        atomicAdd(&stats[1], broken);
    }
}

// fsai_assemble writes row k's block entries from outptr[k] - outbase on
// in outcol and outval, and its left entries from leftptr[k] - leftbase on
// in leftcol and leftval: the pointers may count the entries of earlier
// batches, which the bases take off.
extern "C" __global__ void fsai_assemble(const FsaiSetup S, int own, const int *__restrict__ outptr, int outbase,
                                         int *__restrict__ outcol, float *__restrict__ outval,
                                         const int *__restrict__ leftptr, int leftbase, int *__restrict__ leftcol,
                                         float *__restrict__ leftval)
{
    const long long nb = S.nb;
    for (long long k = fsai_tid(); k < nb; k += fsai_stride()) {
        const int m = S.len[k], left = fsai_left_count(S, k, own), base = outptr[k] - outbase - left;
        const double scale = fsai_scale(S, k);
        for (int p = 0; p < m; p++) {
            const int c = S.pat[p * nb + k], rank = fsai_place(S, k, m, c);
            const float v = fsai_value(S, k, p, scale);
            if (c < own) {
                leftcol[leftptr[k] - leftbase + rank] = c;
                leftval[leftptr[k] - leftbase + rank] = v;
            } else {
                outcol[base + rank] = c - own;
                outval[base + rank] = v;
            }
        }
        outcol[base + m] = S.rows[k] - own;
        outval[base + m] = fsai_diagonal(S, k, scale);
    }
}

// fsai_assemble_padded lays row k out on its whole pattern instead, for the
// values-only update, which keeps the rows on the device (package gpu,
// fixed_place.go): the values of the pattern's columns ascending, zero for
// those a breakdown left out (the pattern's columns from S.len[k] on, in
// the order given), and the diagonal last, from outptr[k] on; full[k] is
// the pattern's length without the diagonal. afsai's onPattern lays the
// CPU's rows out alike.
extern "C" __global__ void fsai_assemble_padded(const FsaiSetup S, const int *__restrict__ full,
                                                const int *__restrict__ outptr, float *__restrict__ outval)
{
    const long long nb = S.nb;
    for (long long k = fsai_tid(); k < nb; k += fsai_stride()) {
        const int m = S.len[k], f = full[k], base = outptr[k];
        const double scale = fsai_scale(S, k);
        for (int p = 0; p < f; p++)
            outval[base + fsai_place(S, k, f, S.pat[p * nb + k])] = p < m ? fsai_entry(S, k, p, scale) : 0.0f;
        outval[base + f] = __double2float_rn(scale);
    }
}
