// Post-filtering of static FSAI (paper 000 eqs. 3.11-3.13), as
// afsai/static.go's filter does it, one thread per row: the row
// v = (g, 1) / sqrt(psi), rounded to float as fsai_assemble would write
// it, loses the off-diagonal entries eps below delta ||v||_2 and the rest
// is rescaled by 1 / sqrt(1 + eps' A eps). The norm and eps' A eps are
// summed in double in the CPU's order: the norm over the row's columns
// ascending and the diagonal last, eps' A eps over the dropped columns
// ascending, each by its row of A. The kept columns and their final values
// move to the front of S.pat and S.g, S.len becomes their number and
// S.gdiag gets the diagonal entry; fsai_assemble then writes them as they
// are. longest gets the largest pattern before filtering and dropped the
// entries dropped (integer atomics, one per warp).

// fsai_dropped says whether row k's value v (of an off-diagonal column) is
// below the threshold thr.
__device__ __forceinline__ bool fsai_dropped(float v, double thr)
{
    return fabs((double)v) < thr;
}

// fsai_eps_a_eps returns eps' A eps for row k's m columns whose values
// (scale as fsai_entry takes it) fall below thr.
__device__ double fsai_eps_a_eps(const FsaiSetup &S, long long k, int m, double scale, double thr)
{
    const long long nb = S.nb;
    double q = 0.0;
    for (int p = 0; p < m; p++) {
        const float ve = fsai_entry(S, k, p, scale);
        if (!fsai_dropped(ve, thr))
            continue;
        // (A eps)_e over row e of A, whose columns and the pattern's ascend
        const int e = S.pat[p * nb + k];
        double s = 0.0;
        int u = 0;
        for (int t = S.rowptr[e]; t < S.rowptr[e + 1] && u < m; t++) {
            const int c = S.col[t];
            while (u < m && S.pat[u * nb + k] < c)
                u++;
            if (u == m || S.pat[u * nb + k] != c)
                continue;
            const float vc = fsai_entry(S, k, u, scale);
            if (fsai_dropped(vc, thr))
                s = __dadd_rn(s, __dmul_rn((double)S.val[t], (double)vc));
        }
        q = __dadd_rn(q, __dmul_rn((double)ve, s));
    }
    return q;
}

extern "C" __global__ void fsai_static_filter(const FsaiSetup S, double delta, int *__restrict__ longest,
                                              unsigned long long *__restrict__ dropped)
{
    const long long nb = S.nb;
    int most = 0;
    unsigned long long gone = 0;
    for (long long k = fsai_tid(); k < nb; k += fsai_stride()) {
        const int m = S.len[k];
        const double scale = fsai_scale(S, k);
        const float d = __double2float_rn(scale);
        double norm = 0.0;
        for (int p = 0; p < m; p++) {
            const double v = (double)fsai_entry(S, k, p, scale);
            norm = __dadd_rn(norm, __dmul_rn(v, v));
        }
        norm = __dadd_rn(norm, __dmul_rn((double)d, (double)d));
        const double thr = __dmul_rn(delta, __dsqrt_rn(norm));
        int kept = 0;
        for (int p = 0; p < m; p++)
            kept += !fsai_dropped(fsai_entry(S, k, p, scale), thr);
        most = max(most, m);
        gone += m - kept;
        if (kept == m) { // nothing dropped: the row as it is
            for (int p = 0; p < m; p++)
                S.g[p * nb + k] = fsai_entry(S, k, p, scale);
            S.gdiag[k] = d;
            continue;
        }
        const double rescale = __ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(1.0, fsai_eps_a_eps(S, k, m, scale, thr))));
        int w = 0; // entries kept so far: w <= p, so none is overwritten before it is read
        for (int p = 0; p < m; p++) {
            const float v = fsai_entry(S, k, p, scale);
            if (fsai_dropped(v, thr))
                continue;
            S.pat[w * nb + k] = S.pat[p * nb + k];
            S.g[w * nb + k] = __double2float_rn(__dmul_rn((double)v, rescale));
            w++;
        }
        S.len[k] = kept;
        S.gdiag[k] = __double2float_rn(__dmul_rn((double)d, rescale));
    }
    for (int off = 16; off > 0; off >>= 1) {
        most = max(most, __shfl_down_sync(FSAI_FULL, most, off));
        gone += __shfl_down_sync(FSAI_FULL, gone, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(longest, most);
        atomicAdd(dropped, gone);
    }
}
