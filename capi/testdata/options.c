/*
 * options.c: the options handle, the stop-reason codes and the operation
 * log, for capi_test.go. Each rank builds its rows of tridiag(-1, 2.01, -1) of
 * order N and checks: aFSAI with afsai.steps 0 (a diagonal G) takes more
 * iterations than the default; maxit 3 stops with FSAI_REASON_MAX_ITERATIONS;
 * a converged solve gives FSAI_REASON_CONVERGED; an unknown option, an
 * out-of-range value and options that differ between the ranks are refused
 * with FSAI_ERR_INPUT and a message naming them. Rank 0 prints "ok" when
 * all passed.
 *
 *     mpirun -np 2 ./options_c
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsai.h"

enum { N = 2000 };

static int rank, failed;

/* expect records a failure when code is not want or the last error does
 * not contain text (when text is not NULL). */
static void expect(int code, int want, const char *text, const char *what) {
	char msg[512] = "";
	if (code != FSAI_OK)
		fsai_last_error(msg, sizeof msg);
	if (code != want || (text != NULL && strstr(msg, text) == NULL)) {
		fprintf(stderr, "rank %d: %s: code %d (want %d): %s\n", rank, what, code, want, msg);
		failed = 1;
	}
}

/* solve makes a solver of A with the options o, solves A x = A*1 from
 * zero and returns the iterations and the stop reason. */
static int solve(fsai_matrix A, fsai_options o, int64_t nlocal, int want, int *reason) {
	fsai_solver s;
	double *b = malloc(nlocal * sizeof *b), *x = calloc(nlocal, sizeof *x), relres;
	int its = -1;
	for (int64_t i = 0; i < nlocal; i++)
		b[i] = 0.01;
	if (rank == 0)
		b[0] += 1;
	if (rank == 1 || (rank == 0 && nlocal == N))
		b[nlocal - 1] += 1;
	expect(fsai_solver_create_opts(A, o, &s), FSAI_OK, NULL, "fsai_solver_create_opts");
	expect(fsai_solver_reason(s, 0, reason), FSAI_ERR_INPUT, "the last solve has 0 columns", "reason before a solve");
	expect(fsai_solve(s, b, x, &its, &relres), want, NULL, "fsai_solve");
	expect(fsai_solver_reason(s, 0, reason), FSAI_OK, NULL, "fsai_solver_reason");
	expect(fsai_solver_reason(s, 1, reason), FSAI_ERR_INPUT, "not a column 1", "reason of a column beyond");
	expect(fsai_solver_free(s), FSAI_OK, NULL, "fsai_solver_free");
	free(b);
	free(x);
	return its;
}

/* oplog solves with the option log and checks the operation counts:
 * one solve, at least an SpMV and a preconditioner application per
 * iteration, seconds and bytes positive, the parts within the whole; and
 * the refusals of a solver without the log and of an unknown kind. */
static void oplog(fsai_matrix A, int64_t nlocal) {
	fsai_options o;
	fsai_solver s, plain;
	double *b = malloc(nlocal * sizeof *b), *x = calloc(nlocal, sizeof *x);
	for (int64_t i = 0; i < nlocal; i++)
		b[i] = 1;
	int its = -1;
	expect(fsai_options_create(&o), FSAI_OK, NULL, "fsai_options_create (log)");
	expect(fsai_options_set(o, "backend", "cpu"), FSAI_OK, NULL, "backend cpu (log)");
	expect(fsai_solver_create_opts(A, o, &plain), FSAI_OK, NULL, "solver without the log");
	expect(fsai_options_set(o, "log", "true"), FSAI_OK, NULL, "log true");
	expect(fsai_solver_create_opts(A, o, &s), FSAI_OK, NULL, "solver with the log");
	expect(fsai_solve(s, b, x, &its, NULL), FSAI_OK, NULL, "fsai_solve (log)");
	int64_t count[3];
	double seconds[3], bytes[3];
	for (int op = FSAI_OP_SPMV; op <= FSAI_OP_SOLVE; op++)
		expect(fsai_solver_oplog(s, op, &count[op], &seconds[op], &bytes[op]), FSAI_OK, NULL, "fsai_solver_oplog");
	if (count[FSAI_OP_SOLVE] != 1 || count[FSAI_OP_SPMV] < its || count[FSAI_OP_PREC] < its || bytes[FSAI_OP_SPMV] <= 0 ||
	    bytes[FSAI_OP_PREC] <= 0 || !(seconds[FSAI_OP_SPMV] > 0) ||
	    seconds[FSAI_OP_SPMV] + seconds[FSAI_OP_PREC] > seconds[FSAI_OP_SOLVE]) {
		fprintf(stderr, "rank %d: log after %d iterations: spmv %lld %g s %g B, prec %lld %g s %g B, solve %lld %g s\n", rank, its,
		        (long long)count[0], seconds[0], bytes[0], (long long)count[1], seconds[1], bytes[1], (long long)count[2], seconds[2]);
		failed = 1;
	}
	expect(fsai_solver_oplog(s, 3, &count[0], &seconds[0], &bytes[0]), FSAI_ERR_INPUT, "operation 3 is not", "oplog of kind 3");
	expect(fsai_solver_oplog(plain, FSAI_OP_SPMV, &count[0], &seconds[0], &bytes[0]), FSAI_ERR_INPUT, "without the option log",
	       "oplog without the log");
	expect(fsai_solver_free(s), FSAI_OK, NULL, "fsai_solver_free (log)");
	expect(fsai_solver_free(plain), FSAI_OK, NULL, "fsai_solver_free (plain)");
	expect(fsai_options_free(o), FSAI_OK, NULL, "fsai_options_free (log)");
	free(b);
	free(x);
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size > 2) {
		fprintf(stderr, "options.c runs on 1 or 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	expect(fsai_init(MPI_Comm_c2f(MPI_COMM_WORLD)), FSAI_OK, NULL, "fsai_init");
	const int64_t first = N * rank / size, nlocal = N * (rank + 1) / size - first;
	int64_t *rp = malloc((nlocal + 1) * sizeof *rp), *cols = malloc(3 * nlocal * sizeof *cols), k = 0;
	double *vals = malloc(3 * nlocal * sizeof *vals);
	rp[0] = 0;
	for (int64_t r = 0; r < nlocal; r++) {
		for (int64_t j = first + r - 1; j <= first + r + 1; j++) {
			if (j >= 0 && j < N) {
				cols[k] = j;
				vals[k++] = j == first + r ? 2.01 : -1;
			}
		}
		rp[r + 1] = k;
	}
	fsai_matrix A;
	expect(fsai_matrix_create(N, first, nlocal, rp, cols, vals, 0, &A), FSAI_OK, NULL, "fsai_matrix_create");

	fsai_options o;
	int reason = -1;
	expect(fsai_options_create(&o), FSAI_OK, NULL, "fsai_options_create");
	expect(fsai_options_set(o, "backend", "cpu"), FSAI_OK, NULL, "backend cpu");
	int its_default = solve(A, o, nlocal, FSAI_OK, &reason);
	if (reason != FSAI_REASON_CONVERGED) {
		fprintf(stderr, "rank %d: converged solve: reason %d\n", rank, reason);
		failed = 1;
	}
	expect(fsai_options_set(o, "afsai.steps", "0"), FSAI_OK, NULL, "afsai.steps 0");
	int its_diagonal = solve(A, o, nlocal, FSAI_OK, &reason);
	if (its_diagonal <= its_default) {
		fprintf(stderr, "rank %d: afsai.steps 0 took %d iterations, the default %d: not more\n", rank, its_diagonal, its_default);
		failed = 1;
	}
	expect(fsai_options_set(o, "maxit", "3"), FSAI_OK, NULL, "maxit 3");
	if (solve(A, o, nlocal, FSAI_NOT_CONVERGED, &reason) != 3 || reason != FSAI_REASON_MAX_ITERATIONS) {
		fprintf(stderr, "rank %d: maxit 3: reason %d\n", rank, reason);
		failed = 1;
	}
	oplog(A, nlocal);
	expect(fsai_options_set(o, "afsai.stepz", "4"), FSAI_ERR_INPUT, "unknown option \"afsai.stepz\"", "unknown option");
	expect(fsai_options_set(o, "afsai.power", "4"), FSAI_ERR_INPUT, "option afsai.power: 4 is not 1, 2 or 3", "afsai.power 4");
	expect(fsai_options_set(o, "tol", "x"), FSAI_ERR_INPUT, "option tol: \"x\" is not a number", "tol x");
	expect(fsai_options_set(o, "tol", NULL), FSAI_ERR_INPUT, "NULL", "tol NULL");
	fsai_solver s;
	expect(fsai_solver_create_opts(A, A, &s), FSAI_ERR_HANDLE, "not an options handle", "a matrix for options");
	if (size > 1) {
		expect(fsai_options_set(o, "afsai.steps", rank == 0 ? "1" : "2"), FSAI_OK, NULL, "afsai.steps by rank");
		expect(fsai_solver_create_opts(A, o, &s), FSAI_ERR_INPUT, "the options differ between the ranks", "options differ");
	}
	expect(fsai_options_free(o), FSAI_OK, NULL, "fsai_options_free");
	expect(fsai_options_free(o), FSAI_ERR_HANDLE, NULL, "fsai_options_free twice");
	expect(fsai_matrix_free(A), FSAI_OK, NULL, "fsai_matrix_free");
	expect(fsai_finalize(), FSAI_OK, NULL, "fsai_finalize");
	MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations: default %d, afsai.steps 0 %d\n%s\n", its_default, its_diagonal, failed ? "FAILED" : "ok");
	MPI_Finalize();
	free(rp);
	free(cols);
	free(vals);
	return failed;
}
