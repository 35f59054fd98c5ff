// The CPU SpMV kernel in C: rows [lo, hi) of y = A*x + beta*y for a CSR
// block with int32 row pointers and column indices, values in double or
// single precision. Each row's sum starts at zero and adds the row's
// products in the order of its entries: the bits of the plain Go loop
// spmvRows, without its bounds checks, with the entries of short rows asked
// for ahead of use.
#include <stdint.h>

double fsai_spmv_f64(const int32_t *rowptr, const int32_t *col, const double *val,
                     const int32_t *rowmap, const double *x, double beta, double *y,
                     const double *w, int64_t lo, int64_t hi);
double fsai_spmv_f32(const int32_t *rowptr, const int32_t *col, const float *val,
                     const int32_t *rowmap, const double *x, double beta, double *y,
                     const double *w, int64_t lo, int64_t hi);
