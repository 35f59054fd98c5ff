// Halos to peers: one launch gathers the entries of up to FSAI_GATHERS
// halos, dst_j[k] = src[idx_j[k]], each into its own destination (another
// device's memory, written over NVLink or PCIe). A distributed SpMV queues
// one for all its device-to-device sends instead of a launch per send.
//
// The destinations travel by value in a kernel parameter (FsaiGathers):
// end[j] is the number of entries of destinations 0..j together, and the
// slots past the last destination repeat the total. The grid strides over
// all entries at once; each thread finds its destination among the ends.

#define FSAI_GATHERS 8

struct FsaiGathers {
    const int *idx[FSAI_GATHERS];
    double *dst[FSAI_GATHERS];
    long long end[FSAI_GATHERS];
};

extern "C" __global__ void gather_halos(const FsaiGathers g, long long n, const double *__restrict__ src)
{
    for (long long k = fsai_tid(); k < n; k += fsai_stride()) {
        int j = 0;
        while (k >= g.end[j])
            j++;
        const long long i = j > 0 ? k - g.end[j - 1] : k;
        g.dst[j][i] = src[g.idx[j][i]];
    }
}
