// Moving the active rows of the adaptive FSAI set-up together (package gpu,
// fsai_level.go). Once most rows of a batch have stopped, the rows still
// active lie scattered in its structure of arrays (fsai.cuh), and a thread
// per row reads one word of every 32-byte sector it loads. fsai_compact
// copies their state into a level of their own, of as many rows as there
// are, where the threads of a warp read adjacent words again; fsai_restore
// brings their results back when the steps are over. Both run one thread
// per row of the lower level C; up[w] is row w's row in the level P above.

// fsai_compact moves the state a step reads: the row, its pattern, factor,
// y and psi. The row keeps no entries in P, so that P's final solve passes
// over it; fsai_restore sets them.
extern "C" __global__ void fsai_compact(const FsaiSetup P, const FsaiSetup C, const int *up)
{
    for (long long w = fsai_tid(); w < C.nb; w += fsai_stride()) {
        const long long k = up[w];
        const int m = P.len[k];
        ((int *)C.rows)[w] = P.rows[k]; // read-only to the steps; the level's own array
        C.len[w] = m;
        C.state[w] = P.state[k];
        C.psi[w] = P.psi[k];
        for (int q = 0; q < m; q++) {
            C.pat[q * C.nb + w] = P.pat[q * P.nb + k];
            C.y[q * C.nb + w] = P.y[q * P.nb + k];
        }
        const long long t = fsai_tri(m);
        for (long long e = 0; e < t; e++)
            C.L[e * C.nb + w] = P.L[e * P.nb + k];
        P.len[k] = 0;
    }
}

// fsai_restore brings back what the assembly of G reads: the pattern, g,
// psi and the state.
extern "C" __global__ void fsai_restore(const FsaiSetup P, const FsaiSetup C, const int *up)
{
    for (long long w = fsai_tid(); w < C.nb; w += fsai_stride()) {
        const long long k = up[w];
        const int m = C.len[w];
        P.len[k] = m;
        P.state[k] = C.state[w];
        P.psi[k] = C.psi[w];
        for (int q = 0; q < m; q++) {
            P.pat[q * P.nb + k] = C.pat[q * C.nb + w];
            P.g[q * P.nb + k] = C.g[q * C.nb + w];
        }
    }
}
