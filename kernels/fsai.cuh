// State of the GPU adaptive FSAI set-up (package gpu, fsai.go), shared by
// the kernels kapgrad.cu, sysgather.cu, cholesky.cu and fsai_assemble.cu.
//
// A batch of nb rows of G is computed at once. Per-row arrays are stored
// "structure of arrays": entry p of batch row k is at [p * nb + k], so that
// threads of consecutive rows touch consecutive words. Row k is local row
// rows[k] of A. It holds, like the CPU factor (afsai/factor.go), its pattern
// P in insertion order, the Cholesky factor L of A[P,P] packed by rows
// (row r starts at r(r+1)/2), y = L^-1 A[P,i], g = -L'^-1 y and psi.
//
// Every floating-point operation that the CPU reference does in float32 is
// written with a round-to-nearest intrinsic (__fmul_rn, __fadd_rn, ...),
// which the compiler never contracts into a fused multiply-add, and in the
// CPU's order: the GPU then computes bit for bit what the CPU computes.

// Row states.
#define FSAI_ACTIVE 0   // still growing
#define FSAI_DONE 1     // stopped: Eps or Stall test, or no candidate left
#define FSAI_BROKEN 2   // stopped: the Cholesky of a new column broke down

// FSAI_FULL is the mask of a whole warp, for the kernels with a warp per row.
#define FSAI_FULL 0xffffffffu

// FsaiSetup is passed by value to every kernel. Every member is 8 bytes, so
// the layout matches the Go struct fsaiSetup without padding rules.
struct FsaiSetup {
    // A: the local matrix, both triangles, columns ascending; diag its
    // diagonal.
    const int *rowptr;
    const int *col;
    const float *val;
    const float *diag;
    // per batch row
    const int *rows; // local row i
    int *len;        // committed pattern length m
    int *ncand;      // columns chosen by this step's gradient
    int *state;      // FSAI_ACTIVE, FSAI_DONE or FSAI_BROKEN
    float *psi;
    int *pat;   // [mmax][nb]: pattern, then this step's candidates
    float *L;   // [mmax(mmax+1)/2][nb]
    float *y;   // [mmax][nb]
    float *g;   // [mmax][nb]
    float *sys; // [s][mmax+1][nb]: gathered A[j,P] of candidate j; slot mmax holds A[j,i]
    int *active_count; // rows still active after a step
    long long nb;      // rows in the batch
    long long mmax;    // Steps * StepSize: the longest pattern
    long long s;       // StepSize
    double eps;        // Params.Eps
    double tol;        // breakdown threshold, relative (afsai/factor.go)
    double stall;      // Params.Stall
    long long scaled;  // Params.Scaled: rank candidates by |gradient_j| / sqrt(a_jj)
    // The rows a step works on: the nact batch rows listed in active, the
    // rows fsai_border found still active after the step before, which it
    // lists in next for the step after (in any order: rows are
    // independent). NULL: every batch row, each checked against its state
    // (the first step, and the set-up on given patterns).
    const int *active;
    int *next;
    long long nact;
    // Static FSAI's post-filter (fsai_filter.cu) leaves each row's final
    // values in g and its diagonal entry here; NULL: the rows are
    // (g, 1) / sqrt(psi), scaled by fsai_assemble.
    float *gdiag;
};

// fsai_count is how many rows a step works on.
__device__ __forceinline__ long long fsai_count(const FsaiSetup &S)
{
    return S.active ? S.nact : S.nb;
}

// fsai_row is the batch row of the t-th row a step works on.
__device__ __forceinline__ long long fsai_row(const FsaiSetup &S, long long t)
{
    return S.active ? (long long)S.active[t] : t;
}

// FSAI_EMPTY marks a free slot of a hash table of columns in shared memory
// (kapgrad.cu, fsai_pattern.cu).
#define FSAI_EMPTY (-1)

// fsai_insert returns the slot of column c in a table of 2^bits slots,
// inserting c when it is absent, and sets *added when this call inserted
// it: multiplicative hashing and linear probing; atomicCAS makes concurrent
// insertions of different columns by different lanes safe. The table must
// keep a free slot for probing to stop at.
__device__ __forceinline__ int fsai_insert(int *keys, int bits, int c, bool *added)
{
    const int mask = (1 << bits) - 1;
    int h = (int)(((unsigned)c * 2654435761u) >> (32 - bits));
    for (;;) {
        int old = atomicCAS(&keys[h], FSAI_EMPTY, c);
        if (old == FSAI_EMPTY || old == c) {
            *added = old == FSAI_EMPTY;
            return h;
        }
        h = (h + 1) & mask;
    }
}

// fsai_slot is fsai_insert for callers that need only the slot.
__device__ __forceinline__ int fsai_slot(int *keys, int bits, int c)
{
    bool added;
    return fsai_insert(keys, bits, c, &added);
}

// Rows laid end to end: a group of G lanes (a power of two, 32 at most,
// mask its lanes) that each hold one row of len entries numbers their
// entries one after the other, so that it can take G of them at a time, a
// lane each, whatever the rows' lengths (kapgrad.cu, fsai_pattern.cu).
// fsai_lay_out returns the lane's row's first number and sets *total to
// the entries of all; fsai_row_of returns the lane whose row holds entry
// t < *total, given the starts.
template <int G> __device__ __forceinline__ int fsai_lay_out(unsigned mask, int lane, int len, int *total)
{
    int end = len;
    for (int off = 1; off < G; off <<= 1) {
        const int y = __shfl_up_sync(mask, end, off, G);
        if (lane >= off)
            end += y;
    }
    *total = __shfl_sync(mask, end, G - 1, G);
    return end - len;
}

template <int G> __device__ __forceinline__ int fsai_row_of(unsigned mask, int start, int t)
{
    int q = 0; // the last row that starts at or before entry t
    for (int half = G / 2; half > 0; half >>= 1) {
        if (__shfl_sync(mask, start, q + half, G) <= t)
            q += half;
    }
    return q;
}

// fsai_entry returns A[r][c], zero when it is not stored: a binary search of
// row r's sorted columns. The midpoint is lo + (hi - lo) / 2: lo + hi
// overflows an int once the row pointers pass 2^30, on a local matrix of
// more than about 1.07G entries.
__device__ __forceinline__ float fsai_entry(const FsaiSetup &S, int r, int c)
{
    int lo = S.rowptr[r], hi = S.rowptr[r + 1];
    while (lo < hi) {
        const int mid = lo + ((hi - lo) >> 1);
        int cm = S.col[mid];
        if (cm == c)
            return S.val[mid];
        if (cm < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0.0f;
}

// fsai_tri is the offset of row r of a packed lower triangle.
__device__ __forceinline__ long long fsai_tri(long long r)
{
    return r * (r + 1) / 2;
}
