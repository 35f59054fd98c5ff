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

/* elapsed returns the slowest rank's seconds since t0. */
double elapsed(double t0);

#endif
