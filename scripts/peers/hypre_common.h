/*
 * hypre_common.h: what the hypre peer drivers (hypre_fsai.c,
 * hypre_parasails.c) share: aborting with a message, checked hypre and MPI
 * calls, flag values, the matrix (generated or read) as a ParCSR matrix,
 * vectors, and the slowest rank's time.
 */
#ifndef HYPRE_COMMON_H
#define HYPRE_COMMON_H

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <_hypre_parcsr_mv.h>

#include "peers_common.h"

/* hypre_peer_name prefixes die's messages ("hypre_fsai"); main sets it. */
extern const char *hypre_peer_name;

/* die prints a message, prefixed with the program and this rank, and aborts
 * every rank. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* HYPRE_CALL aborts with hypre's description when a call reports an error. */
#define HYPRE_CALL(call)                                                     \
  do {                                                                       \
    HYPRE_Int ierr_ = (call);                                                \
    if (ierr_) {                                                             \
      char msg_[256] = "";                                                   \
      HYPRE_DescribeError(ierr_, msg_);                                      \
      die("%s:%d: %s: hypre error %d: %s", __FILE__, __LINE__, #call,        \
          (int)ierr_, msg_);                                                 \
    }                                                                        \
  } while (0)

/* MPI_CALL aborts when an MPI call fails. */
#define MPI_CALL(call)                                                       \
  do {                                                                       \
    if ((call) != MPI_SUCCESS) die("%s:%d: %s failed", __FILE__, __LINE__, #call); \
  } while (0)

/* parse_int reads an integer flag value >= min, or aborts. */
int parse_int(const char *flag, const char *s, int min);

/* parse_real reads a positive finite flag value, or aborts. */
double parse_real(const char *flag, const char *s);

/* common_options are the options every hypre driver takes: the matrix
 * (-problem poisson7:N or -matrix PATH.mtx), -json PATH, -tol, -maxit,
 * -rhs ones|random. */
typedef struct {
  const char *problem, *matrix, *json;
  double tol;
  int maxit;
  int random_rhs; /* -rhs random: b = A*u, u as fsai-dist's -random-rhs */
} common_options;

/* flag_value returns the value of flag argv[i]: for -h, -help and --help it
 * prints usage and exits; a flag without a value aborts. */
const char *flag_value(int argc, char **argv, int i, const char *usage);

/* common_flag sets the option of c that flag names and returns 1, or
 * returns 0 when flag is none of c's. */
int common_flag(common_options *c, const char *flag, const char *val);

/* check_common aborts unless exactly one of -problem and -matrix was given
 * and tol < 1. */
void check_common(const common_options *c, const char *usage);

/* load_rows gives this rank's stripe of A: generated from problem
 * ("poisson7:N") when it is not NULL, else read from the Matrix Market
 * file matrix. */
void load_rows(const char *problem, const char *matrix, int size, int rank, peer_rows *rows);

/* build_matrix assembles the IJ matrix from the stripe, with exact
 * preallocation of the diagonal and off-diagonal blocks. */
HYPRE_IJMatrix build_matrix(const peer_rows *r);

/* new_vector creates an assembled ParCSR vector over rows [lo, hi] set to
 * value. */
HYPRE_IJVector new_vector(HYPRE_BigInt lo, HYPRE_BigInt hi, double value, HYPRE_ParVector *par);

/* global_nnz is the number of stored entries of a ParCSR matrix, all ranks. */
double global_nnz(hypre_ParCSRMatrix *M);

/* start_clock waits for every rank and returns the time: a stage timed
 * from it by elapsed starts on all ranks together. */
double start_clock(void);

/* elapsed returns the slowest rank's seconds since t0. */
double elapsed(double t0);

/* hypre_system is a driver's problem: this rank's rows, A as a ParCSR
 * matrix, b = A*1, x (zero to start), the residual's work vector, and the
 * figures of the assembly. */
typedef struct {
  peer_rows rows;
  HYPRE_IJMatrix ij;
  HYPRE_ParCSRMatrix A;
  HYPRE_IJVector ijx, ijb, ijones, ijr;
  HYPRE_ParVector x, b, ones, r;
  int rank, size;
  double assembly_s; /* generating or reading A and assembling it, slowest rank */
  double nnz;        /* stored entries of A, all ranks */
} hypre_system;

/* system_start initializes MPI and hypre for the program name (die's
 * prefix) and returns s's rank and size; system_load then makes the
 * matrix (generated from problem, or read from the file matrix) and the
 * vectors. */
void system_start(hypre_system *s, const char *name, int *argc, char ***argv);
void system_load(hypre_system *s, const char *problem, const char *matrix);

/* system_random_rhs makes b = A*u with u_i number i of fsai-dist's random
 * stream 1 (its -random-rhs, problem.Uniform), in (0,1]: the same b as
 * fsai-dist's for the same matrix. */
void system_random_rhs(hypre_system *s);

/* system_relres is the true ||b - A x||_2 / ||b||_2. */
double system_relres(hypre_system *s);

/* system_json_head starts the JSON of a result with the fields every
 * driver reports before its own: peer, prec, matrix, n, nnz, ranks, tol. */
void system_json_head(const hypre_system *s, peer_json *j, const char *prec, const char *matrix, double tol);

/* system_json writes the fields every driver reports after its own, from
 * "iterations" on, in this order. */
void system_json(const hypre_system *s, peer_json *j, int its, int converged, double relres, double hypre_relres,
                 double setup_s, double solve_s, double prec_nnz);

/* system_finish releases s and finalizes hypre and MPI. */
void system_finish(hypre_system *s);

#endif
