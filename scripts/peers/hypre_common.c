/*
 * hypre_common.c: the helpers of the hypre peer drivers (hypre_common.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hypre_common.h"

const char *hypre_peer_name = "hypre";

void die(const char *fmt, ...) {
  va_list ap;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "%s: rank %d: ", hypre_peer_name, rank);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* not reached */
}

int parse_int(const char *flag, const char *s, int min) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > 1000000000)
    die("%s %s: want an integer >= %d", flag, s, min);
  return (int)v;
}

double parse_real(const char *flag, const char *s) {
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v > 0) || !isfinite(v))
    die("%s %s: want a positive number", flag, s);
  return v;
}

/* load_rows gives this rank's stripe of A: generated or read. */
void load_rows(const char *problem, const char *matrix, int size, int rank, peer_rows *rows) {
  char err[512];
  if (problem) {
    int64_t N, lo, hi;
    if (peer_parse_poisson7(problem, &N, err, sizeof err) != 0) die("%s", err);
    peer_split(N * N * N, size, rank, &lo, &hi);
    if (peer_poisson7(N, lo, hi, rows, err, sizeof err) != 0) die("%s", err);
  } else if (peer_read_mm(matrix, size, rank, rows, err, sizeof err) != 0) {
    die("%s", err);
  }
  if (rows->n > 2147483647 || peer_rows_nnz(rows) > 2147483647)
    die("matrix too large for hypre built with 32-bit HYPRE_Int/HYPRE_BigInt");
}

/* build_matrix assembles the IJ matrix from the stripe, with exact
 * preallocation of the diagonal and off-diagonal blocks. */
HYPRE_IJMatrix build_matrix(const peer_rows *r) {
  HYPRE_IJMatrix ij;
  HYPRE_BigInt lo = (HYPRE_BigInt)r->first, hi = (HYPRE_BigInt)(r->first + r->nrows) - 1;
  HYPRE_Int nrows = (HYPRE_Int)r->nrows, *ncols, *diag, *offd;
  HYPRE_BigInt *rows, *cols;
  int64_t i, k, nnz = peer_rows_nnz(r);

  ncols = malloc((size_t)(nrows + 1) * sizeof *ncols);
  diag = malloc((size_t)(nrows + 1) * sizeof *diag);
  offd = malloc((size_t)(nrows + 1) * sizeof *offd);
  rows = malloc((size_t)(nrows + 1) * sizeof *rows);
  cols = malloc((size_t)(nnz + 1) * sizeof *cols);
  if (!ncols || !diag || !offd || !rows || !cols) die("out of memory assembling %lld rows", (long long)nrows);
  for (i = 0; i < nrows; i++) {
    rows[i] = (HYPRE_BigInt)(r->first + i);
    ncols[i] = (HYPRE_Int)(r->rowptr[i + 1] - r->rowptr[i]);
    diag[i] = offd[i] = 0;
    for (k = r->rowptr[i]; k < r->rowptr[i + 1]; k++) {
      cols[k] = (HYPRE_BigInt)r->col[k];
      if (cols[k] >= lo && cols[k] <= hi) diag[i]++;
      else offd[i]++;
    }
  }

  HYPRE_CALL(HYPRE_IJMatrixCreate(MPI_COMM_WORLD, lo, hi, lo, hi, &ij));
  HYPRE_CALL(HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR));
  HYPRE_CALL(HYPRE_IJMatrixSetDiagOffdSizes(ij, diag, offd));
  HYPRE_CALL(HYPRE_IJMatrixInitialize(ij));
  if (nrows > 0) HYPRE_CALL(HYPRE_IJMatrixSetValues(ij, nrows, ncols, rows, cols, r->val));
  HYPRE_CALL(HYPRE_IJMatrixAssemble(ij));

  free(ncols);
  free(diag);
  free(offd);
  free(rows);
  free(cols);
  return ij;
}

/* new_vector creates an assembled ParCSR vector over rows [lo, hi] set to value. */
HYPRE_IJVector new_vector(HYPRE_BigInt lo, HYPRE_BigInt hi, double value, HYPRE_ParVector *par) {
  HYPRE_IJVector v;
  HYPRE_CALL(HYPRE_IJVectorCreate(MPI_COMM_WORLD, lo, hi, &v));
  HYPRE_CALL(HYPRE_IJVectorSetObjectType(v, HYPRE_PARCSR));
  HYPRE_CALL(HYPRE_IJVectorInitialize(v));
  HYPRE_CALL(HYPRE_IJVectorAssemble(v));
  HYPRE_CALL(HYPRE_IJVectorGetObject(v, (void **)par));
  HYPRE_CALL(HYPRE_ParVectorSetConstantValues(*par, value));
  return v;
}

/* global_nnz is the number of stored entries of a ParCSR matrix, all ranks. */
double global_nnz(hypre_ParCSRMatrix *M) {
  HYPRE_CALL(hypre_ParCSRMatrixSetDNumNonzeros(M));
  return hypre_ParCSRMatrixDNumNonzeros(M);
}

/* elapsed returns the slowest rank's seconds since t0. */
double elapsed(double t0) {
  double local = MPI_Wtime() - t0, max;
  MPI_CALL(MPI_Allreduce(&local, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return max;
}

