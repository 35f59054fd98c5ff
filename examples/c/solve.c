/*
 * solve.c: fsai-dist from an MPI program in C. Each rank builds its rows of
 * the 7-point Laplacian on an m x m x m grid, solves two systems with one
 * set-up, then three at once, then takes new values on the same pattern
 * twice (the matrix doubled, then rescaled row and column) and solves again,
 * checking every solution against the known one and its stop reason. The
 * solver's options come through an options handle (fsai_options_set),
 * with one of aFSAI's parameters. Rank 0 prints one line per solve and
 * "ok" at the end; the exit status is 0 only if every check passed.
 *
 *     mpirun -np 2 ./solve [m] [prec] [backend]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsai.h"

static int rank;

/* check ends the program with the library's message when a call fails. */
static void check(int code, const char *what) {
	if (code == FSAI_OK)
		return;
	char msg[512];
	fsai_last_error(msg, sizeof msg);
	fprintf(stderr, "rank %d: %s: code %d: %s\n", rank, what, code, msg);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Rows [first, first+nlocal) of the Laplacian on an m^3 grid, in CSR with
 * global columns; the caller frees the arrays. */
static void laplacian(int64_t m, int64_t first, int64_t nlocal, int64_t **row_ptr, int64_t **cols, double **vals) {
	*row_ptr = malloc((nlocal + 1) * sizeof **row_ptr);
	*cols = malloc(7 * nlocal * sizeof **cols);
	*vals = malloc(7 * nlocal * sizeof **vals);
	int64_t k = 0;
	(*row_ptr)[0] = 0;
	for (int64_t r = 0; r < nlocal; r++) {
		int64_t i = first + r, x = i % m, y = i / m % m, z = i / (m * m);
		int64_t nb[7] = {z > 0 ? i - m * m : -1, y > 0 ? i - m : -1, x > 0 ? i - 1 : -1, i,
		                 x < m - 1 ? i + 1 : -1, y < m - 1 ? i + m : -1, z < m - 1 ? i + m * m : -1};
		for (int j = 0; j < 7; j++) {
			if (nb[j] < 0)
				continue;
			(*cols)[k] = nb[j];
			(*vals)[k] = nb[j] == i ? 6 : -1;
			k++;
		}
		(*row_ptr)[r + 1] = k;
	}
}

/* The exact solutions of the tests. */
static double ones(int64_t i) { (void)i; return 1; }
static double wave(int64_t i) { return sin(0.01 * (double)i); }
/* The row and column weights of the last test: D A D stays SPD. */
static double weight(int64_t i) { return 1.5 + 0.4 * sin((double)i); }

/* b = A*exact on this rank's rows. */
static void rhs(int64_t nlocal, const int64_t *row_ptr, const int64_t *cols, const double *vals,
                double (*exact)(int64_t), double *b) {
	for (int64_t r = 0; r < nlocal; r++)
		for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++)
			b[r] += vals[k] * exact(cols[k]);
}

/* solve solves for the exact solution from a zero guess and checks it;
 * rank 0 prints the outcome. It returns 0 when the solution is right. */
static int solve(fsai_solver s, const char *name, int64_t first, int64_t nlocal, const int64_t *row_ptr,
                 const int64_t *cols, const double *vals, double (*exact)(int64_t)) {
	double *b = calloc(nlocal, sizeof *b), *x = calloc(nlocal, sizeof *x);
	rhs(nlocal, row_ptr, cols, vals, exact, b);
	int its;
	double relres, err = 0;
	check(fsai_solve(s, b, x, &its, &relres), name);
	int reason;
	check(fsai_solver_reason(s, 0, &reason), "fsai_solver_reason");
	for (int64_t r = 0; r < nlocal; r++)
		err = fmax(err, fabs(x[r] - exact(first + r)));
	MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%-14s iterations %4d  relres %.2e  max error %.2e\n", name, its, relres, err);
	free(b);
	free(x);
	return !(reason == FSAI_REASON_CONVERGED && relres <= 1e-8 && err <= 1e-4); /* the error is up to cond(A) times relres */
}

/* solve_many solves for three exact solutions at once (fsai_solve_many)
 * and checks each; it returns 0 when all are right. */
static int solve_many(fsai_solver s, int64_t first, int64_t nlocal, const int64_t *row_ptr, const int64_t *cols,
                      const double *vals) {
	enum { k = 3 };
	double (*exact[k])(int64_t) = {ones, wave, weight};
	double *b = calloc(k * nlocal, sizeof *b), *x = calloc(k * nlocal, sizeof *x);
	for (int c = 0; c < k; c++) /* column c is b[c*nlocal .. (c+1)*nlocal-1] */
		rhs(nlocal, row_ptr, cols, vals, exact[c], b + c * nlocal);
	int its[k];
	double relres[k], err[k] = {0};
	check(fsai_solve_many(s, k, b, x, its, relres), "fsai_solve_many");
	int bad = 0;
	for (int c = 0; c < k; c++) {
		for (int64_t r = 0; r < nlocal; r++)
			err[c] = fmax(err[c], fabs(x[c * nlocal + r] - exact[c](first + r)));
	}
	MPI_Allreduce(MPI_IN_PLACE, err, k, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	for (int c = 0; c < k; c++) {
		if (rank == 0)
			printf("many, column %d iterations %4d  relres %.2e  max error %.2e\n", c + 1, its[c], relres[c], err[c]);
		bad |= !(relres[c] <= 1e-8 && err[c] <= 1e-4);
	}
	free(b);
	free(x);
	return bad;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int64_t m = argc > 1 ? atoll(argv[1]) : 16;
	const char *prec = argc > 2 ? argv[2] : "afsai";
	const char *backend = argc > 3 ? argv[3] : "auto";

	check(fsai_init(MPI_Comm_c2f(MPI_COMM_WORLD)), "fsai_init");
	int64_t n = m * m * m, first = n * rank / size, nlocal = n * (rank + 1) / size - first;
	int64_t *row_ptr, *cols;
	double *vals;
	laplacian(m, first, nlocal, &row_ptr, &cols, &vals);
	int64_t nnz = row_ptr[nlocal];

	fsai_matrix A;
	fsai_solver s;
	check(fsai_matrix_create(n, first, nlocal, row_ptr, cols, vals, 0, &A), "fsai_matrix_create");
	/* The options: any of the table of docs/library.md, by name and value
	 * as on the command line (fsai_solver_create takes the common four). */
	fsai_options o;
	check(fsai_options_create(&o), "fsai_options_create");
	check(fsai_options_set(o, "prec", prec), "prec");
	check(fsai_options_set(o, "backend", backend), "backend");
	check(fsai_options_set(o, "maxit", "1000"), "maxit");
	check(fsai_options_set(o, "afsai.steps", "8"), "afsai.steps");
	check(fsai_solver_create_opts(A, o, &s), "fsai_solver_create_opts");
	check(fsai_options_free(o), "fsai_options_free");
	int bad = 0;
	bad |= solve(s, "A x = A 1", first, nlocal, row_ptr, cols, vals, ones);
	bad |= solve(s, "A x = A w", first, nlocal, row_ptr, cols, vals, wave);
	bad |= solve_many(s, first, nlocal, row_ptr, cols, vals);

	for (int64_t k = 0; k < nnz; k++) /* the next step: 2A */
		vals[k] *= 2;
	check(fsai_update_values(s, vals), "fsai_update_values");
	bad |= solve(s, "2A x = 2A w", first, nlocal, row_ptr, cols, vals, wave);

	for (int64_t r = 0; r < nlocal; r++) /* and then D A D */
		for (int64_t k = row_ptr[r]; k < row_ptr[r + 1]; k++)
			vals[k] = weight(first + r) * vals[k] / 2 * weight(cols[k]);
	check(fsai_update_values(s, vals), "fsai_update_values");
	bad |= solve(s, "DAD x = DAD w", first, nlocal, row_ptr, cols, vals, wave);

	/* A handle the library did not make is an error with a message. */
	if (fsai_solve(s + 1000, NULL, NULL, NULL, NULL) != FSAI_ERR_HANDLE) {
		fprintf(stderr, "rank %d: a bad handle was accepted\n", rank);
		bad = 1;
	}

	check(fsai_solver_free(s), "fsai_solver_free");
	check(fsai_matrix_free(A), "fsai_matrix_free");
	check(fsai_finalize(), "fsai_finalize");
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s\n", bad ? "FAILED" : "ok");
	free(row_ptr);
	free(cols);
	free(vals);
	MPI_Finalize(); /* the program's MPI: the library left it running */
	return bad;
}
