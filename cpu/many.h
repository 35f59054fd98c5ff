// GMRES's block kernels in C, over a basis of k vectors of n entries, one
// after another in v, and entries [lo, hi) of w and of each vector: the
// dots V'w, the update w += V a, and the update followed by the dots and
// w'w tile by tile. Four vectors go at a time, four entries per operation
// (see many.c for the order of the sums).
#include <stdint.h>

void fsai_dot_many(double *s, const double *w, const double *v, int64_t n, int64_t k,
                   int64_t lo, int64_t hi);
void fsai_axpy_many(double *w, const double *v, int64_t n, const double *a, int64_t k,
                    int64_t lo, int64_t hi);
void fsai_axpy_dot_many(double *s, double *w, const double *v, int64_t n, const double *a,
                        int64_t k, int64_t lo, int64_t hi, int64_t tile);
