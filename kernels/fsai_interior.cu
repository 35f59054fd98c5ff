// The own rows far from the border (package afsai, early.go; package gpu,
// fsai_interior.go): a breadth-first search in the graph of the diagonal
// block of a system whose own rows start at row own, from the seed rows,
// one level per launch. dist[k] is 0 for own row k not reached yet, else
// its hops from the seeds plus one. The rows still at 0 after the last
// level are the interior rows.

// fsai_seed marks the seed rows: dist 1.
extern "C" __global__ void fsai_seed(int nseeds, const int *__restrict__ seeds, int *__restrict__ dist)
{
    for (long long k = fsai_tid(); k < nseeds; k += fsai_stride())
        dist[seeds[k]] = 1;
}

// fsai_hops marks the rows one hop beyond level: every own row not reached
// yet with a column at level in the diagonal block gets level + 1. A row
// marked in this launch is not at level, so the order of the threads does
// not matter. On a symmetric pattern this is the search from the seeds
// along the rows' columns.
extern "C" __global__ void fsai_hops(int m, int own, const int *__restrict__ rowptr, const int *__restrict__ col,
                                     int *__restrict__ dist, int level)
{
    for (long long k = fsai_tid(); k < m; k += fsai_stride()) {
        if (dist[k] != 0)
            continue;
        for (int e = rowptr[own + k]; e < rowptr[own + k + 1]; e++) {
            int c = col[e] - own;
            if (c >= 0 && dist[c] == level) {
                dist[k] = level + 1;
                break;
            }
        }
    }
}

// fsai_interior_flags writes 1 at pos[k + 1] for each interior row k and 0
// for the others: a prefix sum then numbers the interior rows.
extern "C" __global__ void fsai_interior_flags(int m, const int *__restrict__ dist, int *__restrict__ pos)
{
    for (long long k = fsai_tid(); k < m; k += fsai_stride())
        pos[k + 1] = dist[k] == 0;
}

// fsai_interior_split lists the interior rows, as local rows (own + k), in
// interior and the others, as own rows (k), in near, both ascending; pos[k]
// is the number of interior rows before k.
extern "C" __global__ void fsai_interior_split(int m, int own, const int *__restrict__ dist,
                                               const int *__restrict__ pos, int *__restrict__ interior,
                                               int *__restrict__ near)
{
    for (long long k = fsai_tid(); k < m; k += fsai_stride()) {
        if (dist[k] == 0)
            interior[pos[k]] = own + k;
        else
            near[k - pos[k]] = k;
    }
}
