/*
 * fsai.h: the C API of fsai-dist, a distributed PCG solver with the adaptive
 * FSAI preconditioner for sparse symmetric positive definite systems, on
 * CPUs or one GPU per MPI rank.
 *
 * Build the library with
 *     go build -buildmode=c-shared -o lib/libfsai.so ./capi
 * and a program with
 *     mpicc prog.c -Iinclude -Llib -lfsai -Wl,-rpath,$PWD/lib
 *
 * Lifecycle: fsai_init once; fsai_matrix_create from each rank's rows
 * (and fsai_matrix_set_geometry, for a coarse space); fsai_solver_create
 * (set-up: backend, preconditioner), or fsai_options_create,
 * fsai_options_set and fsai_solver_create_opts for any of the solver's
 * options; fsai_solve as often as needed; fsai_update_values (or
 * fsai_set_values, fsai_rebuild) when the values change on the same
 * pattern; fsai_solver_free, fsai_matrix_free; fsai_finalize.
 *
 * MPI: the library works on a duplicate of the communicator given to
 * fsai_init, so its messages never meet the program's. It uses the
 * program's MPI as it is (any thread level, if the program calls the library
 * from the thread that initialized MPI): it neither initializes nor
 * finalizes an MPI the program initialized. Functions marked collective
 * must be called by every rank of that communicator, in the same order.
 *
 * Errors: every function returns FSAI_OK or a code below, and
 * fsai_last_error gives the message; no input aborts the program. On bad
 * input to a collective function every rank returns an error (the rank that
 * found it FSAI_ERR_INPUT, the others FSAI_ERR_PEER) and nothing has
 * changed. A matrix that the preconditioner's set-up refuses (a diagonal
 * entry that is not positive: not SPD) is bad input; its message names the
 * entry A(I,I) with I counting from 1, as in Matrix Market, while messages
 * about the arrays given to fsai_matrix_create count from its base. After
 * FSAI_ERR_FAILURE (MPI, device) the ranks may be out of step: abort. Docs:
 * docs/errors.md, section "Library".
 *
 * Handles: the library keeps a table of its live handles, numbered from 1
 * and never reused. 0, a freed handle, a matrix handle where a solver's is
 * wanted (and the reverse), and every call before fsai_init or after
 * fsai_finalize return FSAI_ERR_HANDLE; so do a second fsai_solver_free or
 * fsai_matrix_free of one handle.
 *
 * Threads: the library runs one call at a time (a lock); calls from other
 * threads wait for it, and fsai_last_error tells the last failed call of
 * any thread. Collective calls must still come in the same order on every
 * rank.
 *
 * Indices are int64_t and count from the base given to fsai_matrix_create
 * (0 in C, 1 in Fortran). Vectors and values are this rank's part only.
 */
#ifndef FSAI_H
#define FSAI_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	FSAI_OK = 0,
	FSAI_NOT_CONVERGED = 1,  /* fsai_solve stopped before the tolerance */
	FSAI_ERR_INPUT = -1,     /* bad input on this rank, or a matrix that is not SPD */
	FSAI_ERR_PEER = -2,      /* bad input on another rank */
	FSAI_ERR_FAILURE = -3,   /* MPI, device or internal failure */
	FSAI_ERR_HANDLE = -4     /* not a live handle (0, freed, other kind), or no fsai_init */
};

/* Why a solve stopped (fsai_solver_reason); the values never change. */
enum {
	FSAI_REASON_CONVERGED = 0,      /* the true relative residual met the tolerance */
	FSAI_REASON_MAX_ITERATIONS = 1, /* the iteration limit */
	FSAI_REASON_BREAKDOWN = 2,      /* the method broke down (a zero or negative curvature) */
	FSAI_REASON_NAN = 3,            /* a residual that is not a number */
	FSAI_REASON_STAGNATION = 4,     /* no progress over the stagnation window */
	FSAI_REASON_INTERRUPTED = 5,    /* a stop request */
	FSAI_REASON_DIVERGED = 6        /* the residual grew past divtol times the initial one */
};

/* Kinds of operation (fsai_solver_oplog); the values never change. */
enum {
	FSAI_OP_SPMV = 0,  /* products with A, halo exchange included */
	FSAI_OP_PREC = 1,  /* preconditioner applications */
	FSAI_OP_SOLVE = 2  /* whole solves: less the two above, the vector updates and reductions */
};

typedef int64_t fsai_matrix; /* opaque handles */
typedef int64_t fsai_solver;
typedef int64_t fsai_options;

/* Starts the library on a duplicate of comm; C passes MPI_Comm_c2f(comm).
 * Initializes MPI if the program has not (fsai_finalize then finalizes
 * it). Collective. */
int fsai_init(MPI_Fint comm);

/* Frees every matrix and solver and the library's communicator.
 * Collective. */
int fsai_finalize(void);

/* Copies the message of the last failed call into buf (at most len-1
 * bytes, NUL-terminated) and returns its full length. */
int fsai_last_error(char *buf, int len);

/* Builds the n x n matrix whose rows first..first+nlocal-1 this rank holds
 * in CSR: row i has columns cols[row_ptr[i]-base .. row_ptr[i+1]-base-1] and
 * values vals likewise; base is 0 or 1 and applies to first, row_ptr and
 * cols. Both triangles are stored, columns within a row in any order. The
 * ranks' rows follow each other in rank order, at least one per rank. The
 * arrays are copied. Collective.
 *
 * The library reads row_ptr's nlocal+1 entries only once 1 <= nlocal <= n,
 * and cols and vals only as far as row_ptr, checked first, says: row_ptr[0]
 * must be base, row_ptr must not decrease, no row may hold more than n
 * entries, and the entries (16 bytes each) must fit this node's memory.
 * Columns must lie in [base, n-1+base] and appear once in a row, values be
 * finite. Anything else returns FSAI_ERR_INPUT, with the row and the
 * offending entry in the message. */
int fsai_matrix_create(int64_t n, int64_t first, int64_t nlocal, const int64_t *row_ptr,
                       const int64_t *cols, const double *vals, int base, fsai_matrix *matrix);

/* Places this rank's rows of matrix in space for the coarse space of a
 * two-level preconditioner (docs/coarse.md): coords holds x, y and z of the
 * node of each local row, 3*nlocal values, row by row (rows of one node
 * repeat its coordinates); block_size is the unknowns per node, numbered
 * node by node: 3 for displacements, whose coarse space is the rigid-body
 * modes, or 1 for a scalar field, whose coarse space is the constant. The
 * coordinates are copied. They take effect at the next set-up of a solver
 * of this matrix (fsai_solver_create, fsai_solver_create_opts,
 * fsai_rebuild): with the default option coarse "auto", afsai and fsai then
 * get the coarse space for a block size of 3, and "on" gives it to any
 * preconditioner; "off" leaves it out. A block size other than 1 or
 * 3, or a NULL coords, returns FSAI_ERR_INPUT and leaves the matrix as it
 * was. Collective. */
int fsai_matrix_set_geometry(fsai_matrix matrix, const double *coords, int block_size);

/* Releases a matrix handle; its solvers stay usable, the handle is then
 * refused (FSAI_ERR_HANDLE). Not collective. */
int fsai_matrix_free(fsai_matrix matrix);

/* Sets up a solver: prec "afsai", "fsai", "jacobi", "none" or "spai"
 * (NULL: afsai), optionally preceded by the Krylov method and a colon:
 * "cg:afsai", "bicgstab:jacobi", "gmres:spai" (cg, conjugate gradients for
 * SPD matrices, when no method is named; bicgstab and gmres, GMRES(30), are
 * right preconditioned, for nonsymmetric matrices, and solve one
 * right-hand side at a time: fsai_solve_many with k > 1 is refused; spai,
 * the sparse approximate inverse, is not symmetric: with cg it is refused,
 * FSAI_ERR_INPUT);
 * tol on ||b - A x||/||b|| (0: 1e-8); maxit (0: 10000); backend "auto",
 * "cpu" or "cuda" (NULL: auto, the GPU of the rank's node-local rank when
 * there is one). Collective. A matrix the set-up refuses (a diagonal entry
 * that is not positive) returns FSAI_ERR_INPUT on the ranks that found it,
 * FSAI_ERR_PEER on the others, and makes no solver; a device failure
 * returns FSAI_ERR_FAILURE. */
int fsai_solver_create(fsai_matrix matrix, const char *prec, double tol, int maxit,
                       const char *backend, fsai_solver *solver);

/* Makes an options handle holding the defaults of every solver option:
 * the table of docs/library.md, the same names as the command line's
 * flags without their dash ("afsai.steps", "tol", "solver", "threads").
 * Not collective. */
int fsai_options_create(fsai_options *options);

/* Sets option name to value, read as the command line reads -name value
 * ("afsai.steps", "20"). An unknown name or a bad value returns
 * FSAI_ERR_INPUT, with a message naming the option, and leaves the handle
 * as it was. Not collective. */
int fsai_options_set(fsai_options options, const char *name, const char *value);

/* Releases an options handle; the solvers made with it keep their options.
 * Not collective. */
int fsai_options_free(fsai_options options);

/* Sets up a solver with the options of an options handle, which must be
 * alike on every rank (they are compared: FSAI_ERR_INPUT where not).
 * Collective; errors as fsai_solver_create's. */
int fsai_solver_create_opts(fsai_matrix matrix, fsai_options options, fsai_solver *solver);

/* Gives in *reason why column col (from 0; 0 for fsai_solve) of the
 * solver's last solve stopped: FSAI_REASON_CONVERGED, ...; before a first
 * solve, or for a column the last solve did not have, FSAI_ERR_INPUT. Not
 * collective. */
int fsai_solver_reason(fsai_solver solver, int col, int *reason);

/* Gives this rank's count, seconds and bytes moved of one kind of
 * operation (FSAI_OP_*) over the solver's solves so far, for a solver made
 * by fsai_solver_create_opts with the option "log" set to "true" (on a
 * GPU timed with events, read at the end of each solve); FSAI_ERR_INPUT for a solver
 * without it or an unknown kind. Not collective. */
int fsai_solver_oplog(fsai_solver solver, int op, int64_t *count, double *seconds, double *bytes);

/* Solves A x = b on this rank's nlocal rows: x is the initial guess on entry
 * and the solution on return. iterations and relres (the true relative
 * residual) may be NULL. Returns FSAI_NOT_CONVERGED when the solve stopped
 * before the tolerance. Collective. */
int fsai_solve(fsai_solver solver, const double *b, double *x, int *iterations, double *relres);

/* Solves A X = B for k right-hand sides at once (one product with the
 * matrix per iteration for all of them: much cheaper than k fsai_solve
 * calls). b and x hold this rank's rows of each right-hand side in turn:
 * b[c*nlocal + i], a Fortran array b(nlocal, k). iterations and relres, when
 * not NULL, receive k values. Returns FSAI_NOT_CONVERGED when a column
 * stopped before the tolerance. Collective. */
int fsai_solve_many(fsai_solver solver, int k, const double *b, double *x, int *iterations, double *relres);

/* New values of the solver's matrix, its pattern kept: this rank's entries
 * in the order given to fsai_matrix_create. The preconditioner is kept as it
 * was (lagged). Collective. */
int fsai_set_values(fsai_solver solver, const double *vals);

/* fsai_set_values, and the preconditioner's values recomputed on its
 * pattern (aFSAI: without the pattern search). Collective. The values are
 * checked before anything changes: on bad input (NULL, a value that is not
 * finite, or, for every preconditioner but none, a diagonal entry that is
 * not positive) every rank returns an error and the solver goes on solving the old
 * system exactly as before. */
int fsai_update_values(fsai_solver solver, const double *vals);

/* Sets the preconditioner up anew on the current values, pattern included.
 * Collective. */
int fsai_rebuild(fsai_solver solver);

/* Releases a solver and its device memory; the handle is then refused
 * (FSAI_ERR_HANDLE). Not collective. */
int fsai_solver_free(fsai_solver solver);

#ifdef __cplusplus
}
#endif

#endif
