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

const char *flag_value(int argc, char **argv, int i, const char *usage) {
  const char *flag = argv[i];
  if (!strcmp(flag, "-h") || !strcmp(flag, "-help") || !strcmp(flag, "--help")) {
    fputs(usage, stdout);
    MPI_Finalize();
    exit(0);
  }
  if (i + 1 >= argc) die("%s: missing value\n%s", flag, usage);
  return argv[i + 1];
}

int common_flag(common_options *c, const char *flag, const char *val) {
  if (!strcmp(flag, "-problem")) c->problem = val;
  else if (!strcmp(flag, "-matrix")) c->matrix = val;
  else if (!strcmp(flag, "-json")) c->json = val;
  else if (!strcmp(flag, "-tol")) c->tol = parse_real(flag, val);
  else if (!strcmp(flag, "-maxit")) c->maxit = parse_int(flag, val, 1);
  else if (!strcmp(flag, "-rhs")) {
    if (!strcmp(val, "random")) c->random_rhs = 1;
    else if (!strcmp(val, "ones")) c->random_rhs = 0;
    else die("-rhs %s: want ones (b = A*1) or random", val);
  } else return 0;
  return 1;
}

void check_common(const common_options *c, const char *usage) {
  if (!c->problem == !c->matrix) die("give exactly one of -problem poisson7:N and -matrix PATH.mtx\n%s", usage);
  if (c->tol >= 1) die("-tol %g: want tol < 1", c->tol);
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
double start_clock(void) {
  MPI_CALL(MPI_Barrier(MPI_COMM_WORLD));
  return MPI_Wtime();
}

double elapsed(double t0) {
  double local = MPI_Wtime() - t0, max;
  MPI_CALL(MPI_Allreduce(&local, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return max;
}

void system_start(hypre_system *s, const char *name, int *argc, char ***argv) {
  hypre_peer_name = name;
  MPI_CALL(MPI_Init(argc, argv));
  MPI_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &s->rank));
  MPI_CALL(MPI_Comm_size(MPI_COMM_WORLD, &s->size));
  HYPRE_CALL(HYPRE_Init());
}

void system_load(hypre_system *s, const char *problem, const char *matrix) {
  double t0 = start_clock();
  load_rows(problem, matrix, s->size, s->rank, &s->rows);
  s->ij = build_matrix(&s->rows);
  HYPRE_CALL(HYPRE_IJMatrixGetObject(s->ij, (void **)&s->A));
  s->assembly_s = elapsed(t0);
  HYPRE_BigInt lo = (HYPRE_BigInt)s->rows.first, hi = (HYPRE_BigInt)(s->rows.first + s->rows.nrows) - 1;
  s->nnz = global_nnz((hypre_ParCSRMatrix *)s->A);

  /* b = A*1, x0 = 0 */
  s->ijones = new_vector(lo, hi, 1.0, &s->ones);
  s->ijb = new_vector(lo, hi, 0.0, &s->b);
  s->ijx = new_vector(lo, hi, 0.0, &s->x);
  s->ijr = new_vector(lo, hi, 0.0, &s->r);
  HYPRE_CALL(HYPRE_ParCSRMatrixMatvec(1.0, s->A, s->ones, 0.0, s->b));
}

/* uniform is fsai-dist's problem.Uniform(key, i): splitmix64's output i
 * for seed key, mapped to (0,1]. */
static double uniform(uint64_t key, uint64_t i) {
  uint64_t z = key + (i + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)((z >> 11) + 1) * 0x1p-53;
}

void system_random_rhs(hypre_system *s) {
  HYPRE_Real *u = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)s->ones));
  for (int64_t i = 0; i < s->rows.nrows; i++) u[i] = uniform(1, (uint64_t)(s->rows.first + i));
  HYPRE_CALL(HYPRE_ParCSRMatrixMatvec(1.0, s->A, s->ones, 0.0, s->b));
}

double system_relres(hypre_system *s) {
  HYPRE_Real rr, bb;
  HYPRE_CALL(HYPRE_ParVectorCopy(s->b, s->r));
  HYPRE_CALL(HYPRE_ParCSRMatrixMatvec(-1.0, s->A, s->x, 1.0, s->r));
  HYPRE_CALL(HYPRE_ParVectorInnerProd(s->r, s->r, &rr));
  HYPRE_CALL(HYPRE_ParVectorInnerProd(s->b, s->b, &bb));
  return sqrt(rr / bb);
}

void system_json_head(const hypre_system *s, peer_json *j, const char *prec, const char *matrix, double tol) {
  peer_json_init(j);
  peer_json_str(j, "peer", "hypre");
  peer_json_str(j, "prec", prec);
  peer_json_str(j, "matrix", matrix);
  peer_json_int(j, "n", s->rows.n);
  peer_json_int(j, "nnz", (int64_t)s->nnz);
  peer_json_int(j, "ranks", s->size);
  peer_json_num(j, "tol", tol);
}

void system_json(const hypre_system *s, peer_json *j, int its, int converged, double relres, double hypre_relres,
                 double setup_s, double solve_s, double prec_nnz) {
  peer_json_int(j, "iterations", its);
  peer_json_bool(j, "converged", converged);
  peer_json_num(j, "relres", relres);
  peer_json_num(j, "hypre_relres", hypre_relres);
  peer_json_num(j, "assembly_s", s->assembly_s);
  peer_json_num(j, "setup_s", setup_s);
  peer_json_num(j, "solve_s", solve_s);
  peer_json_num(j, "time_per_iter_s", its > 0 ? solve_s / its : NAN);
  peer_json_int(j, "prec_nnz", (int64_t)prec_nnz);
  peer_json_num(j, "prec_density", prec_nnz / s->nnz);
}

void system_finish(hypre_system *s) {
  HYPRE_CALL(HYPRE_IJVectorDestroy(s->ijr));
  HYPRE_CALL(HYPRE_IJVectorDestroy(s->ijx));
  HYPRE_CALL(HYPRE_IJVectorDestroy(s->ijb));
  HYPRE_CALL(HYPRE_IJVectorDestroy(s->ijones));
  HYPRE_CALL(HYPRE_IJMatrixDestroy(s->ij));
  peer_rows_free(&s->rows);
  HYPRE_CALL(HYPRE_Finalize());
  MPI_CALL(MPI_Finalize());
}
