// Assembly of the adaptive FSAI rows: each batch row k becomes
// (g, 1) / sqrt(psi) in CSR at outptr[k], its pattern columns ascending and
// the diagonal last, as afsai/factor.go's row writes it. The scale and the
// products are evaluated in double and rounded to float, as on the CPU.
// One thread per row; a column's place is the number of smaller columns in
// the pattern (no scratch, patterns are short).

extern "C" __global__ void fsai_assemble(const FsaiSetup S, const int *__restrict__ outptr,
                                         int *__restrict__ outcol, float *__restrict__ outval)
{
    const long long nb = S.nb;
    for (long long k = fsai_tid(); k < nb; k += fsai_stride()) {
        const int m = S.len[k], base = outptr[k];
        const double scale = __ddiv_rn(1.0, __dsqrt_rn((double)S.psi[k]));
        for (int p = 0; p < m; p++) {
            const int c = S.pat[p * nb + k];
            int rank = 0;
            for (int q = 0; q < m; q++)
                rank += S.pat[q * nb + k] < c;
            outcol[base + rank] = c;
            outval[base + rank] = __double2float_rn(__dmul_rn((double)S.g[p * nb + k], scale));
        }
        outcol[base + m] = S.rows[k];
        outval[base + m] = __double2float_rn(scale);
    }
}
