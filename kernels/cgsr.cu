// Single-reduction CG's vector work (pcg.SingleFused) on row-major blocks
// of kc <= FSAI_COLS columns of row stride ld, threads and scalars as in
// block.cu. The dot products are added to page-locked host sums (a
// backend Sum) that the iteration reads once with the product's u'w:
// result points at the sums of the chunk's first column, r'u of column c
// going to result[c] and r'r to result[ld + c] (fsai_cols_grid_reduce_at).
// After a general preconditioner's u = M r, dot_pair_cols (block.cu) adds
// them so.

// p = u + b p and s = w + b s (p and s not read where b[c] == 0), x += a p,
// r -= a s, column by column; with d not null also u = d .* r, adding r'u
// and r'r of every column after the update to result.
extern "C" __global__ void cg_sr_update(const FsaiCols a, const FsaiCols b, long long n, int ld,
                                        int kc, double *__restrict__ x, double *__restrict__ r,
                                        double *__restrict__ p, double *__restrict__ s,
                                        double *__restrict__ u, const double *__restrict__ w,
                                        const double *__restrict__ d, double *partials,
                                        unsigned *counter, double *result)
{
    const int R = fsai_cols_rows(kc), row = threadIdx.x / kc, c = threadIdx.x - row * kc;
    double ru = 0.0, rr = 0.0;
    if (row < R) {
        const double ac = a.v[c], bc = b.v[c];
        for (long long i = (long long)blockIdx.x * R + row; i < n; i += (long long)gridDim.x * R) {
            const long long e = i * ld + c;
            const double p0 = bc == 0.0 ? u[e] : u[e] + bc * p[e];
            const double s0 = bc == 0.0 ? w[e] : w[e] + bc * s[e];
            p[e] = p0;
            s[e] = s0;
            x[e] += ac * p0;
            const double r0 = r[e] - ac * s0;
            r[e] = r0;
            if (d) {
                const double u0 = d[i] * r0;
                u[e] = u0;
                ru += r0 * u0;
                rr += r0 * r0;
            }
        }
    }
    if (d) // the same for every thread: all reach the reduction or none
        fsai_cols_grid_reduce_at(ru, rr, kc, 2, ld, partials, counter, result, 1);
}
