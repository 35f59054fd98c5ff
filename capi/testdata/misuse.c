/*
 * misuse.c: the C API's answers to misuse, for capi_test.go. Every rank
 * makes the calls of the cases in order and writes, for each, a line
 * "RANK CASE CODE MESSAGE" (MESSAGE from fsai_last_error, empty on
 * FSAI_OK) to its own file misuse.RANK.out (not to stdout, where mpirun's
 * notes could run into a line); the test compares them with its table. The matrix is the
 * tridiagonal tridiag(-1, 2.5, -1) of order 12, in equal parts.
 *
 *     mpirun -np 3 ./misuse
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsai.h"

enum { N = 12 };

static int rank;
static FILE *out;

/* report prints the outcome of one case. */
static void report(const char *name, int code) {
	char msg[512] = "";
	if (code != FSAI_OK)
		fsai_last_error(msg, sizeof msg);
	fprintf(out, "%d %s %d %s\n", rank, name, code, msg);
	fflush(out);
}

/* tridiag fills rows [first, first+nlocal) in CSR counting from base; the
 * arrays hold 3 entries a row. */
static void tridiag(int64_t first, int64_t nlocal, int base, int64_t *row_ptr, int64_t *cols, double *vals) {
	int64_t k = 0;
	row_ptr[0] = base;
	for (int64_t r = 0; r < nlocal; r++) {
		int64_t i = first + r;
		for (int64_t j = i - 1; j <= i + 1; j++) {
			if (j < 0 || j >= N)
				continue;
			cols[k] = j + base;
			vals[k] = j == i ? 2.5 : -1;
			k++;
		}
		row_ptr[r + 1] = k + base;
	}
}

/* diagonal returns the index of global row g's diagonal entry among this
 * rank's values, or -1 when another rank holds the row. */
static int64_t diagonal(int64_t first, int64_t nlocal, const int64_t *row_ptr, const int64_t *cols, int64_t g) {
	if (g < first || g >= first + nlocal)
		return -1;
	for (int64_t k = row_ptr[g - first]; k < row_ptr[g - first + 1]; k++)
		if (cols[k] == g)
			return k;
	return -1;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char path[64];
	snprintf(path, sizeof path, "misuse.%d.out", rank);
	if ((out = fopen(path, "w")) == NULL) {
		perror(path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	const int64_t nlocal = N / size, first = rank * nlocal;
	const size_t room = 3 * (size_t)nlocal;
	int64_t *rp = malloc((nlocal + 1) * sizeof *rp), *cols = malloc(room * sizeof *cols);
	int64_t *rp1 = malloc((nlocal + 1) * sizeof *rp1), *cols1 = malloc(room * sizeof *cols1);
	int64_t *bad_rp = malloc((nlocal + 1) * sizeof *bad_rp), *bad_cols = malloc(room * sizeof *bad_cols);
	double *vals = malloc(room * sizeof *vals), *bad_vals = malloc(room * sizeof *bad_vals);
	tridiag(first, nlocal, 0, rp, cols, vals);
	tridiag(first, nlocal, 1, rp1, cols1, vals);
	const int64_t nnz = rp[nlocal];
	fsai_matrix m, m1, neg, scratch;
	fsai_solver s, scratch_s;

	report("before_init", fsai_matrix_create(N, first, nlocal, rp, cols, vals, 0, &m));
	report("init", fsai_init(MPI_Comm_c2f(MPI_COMM_WORLD)));
	report("init_twice", fsai_init(MPI_Comm_c2f(MPI_COMM_WORLD)));

	/* fsai_matrix_create: bad row pointers, columns, sizes */
#define WITH_ROW_PTR(name, i, v)                                                                     \
	memcpy(bad_rp, rp, (nlocal + 1) * sizeof *rp);                                               \
	bad_rp[i] = v;                                                                               \
	report(name, fsai_matrix_create(N, first, nlocal, bad_rp, cols, vals, 0, &scratch))
	WITH_ROW_PTR("rowptr_huge", nlocal, 1000000000000LL);
	WITH_ROW_PTR("rowptr_negative", 1, -5);
	WITH_ROW_PTR("rowptr_decreasing", 2, 1);
	WITH_ROW_PTR("rowptr_base", 0, 1);
	memcpy(bad_rp, rp, (nlocal + 1) * sizeof *rp);
	bad_rp[nlocal] = 1000000000000LL;
	report("rowptr_beyond_memory", fsai_matrix_create(1000000000000000LL, first, nlocal, bad_rp, cols, vals, 0, &scratch));
#define WITH_COLUMN(name, v)                                                                         \
	memcpy(bad_cols, cols, nnz * sizeof *cols);                                                  \
	bad_cols[0] = v;                                                                             \
	report(name, fsai_matrix_create(N, first, nlocal, rp, bad_cols, vals, 0, &scratch))
	WITH_COLUMN("column_n", N);
	WITH_COLUMN("column_negative", -1);
	memcpy(bad_cols, cols1, nnz * sizeof *cols1);
	bad_cols[0] = 0;
	report("column_0_base1", fsai_matrix_create(N, first + 1, nlocal, rp1, bad_cols, vals, 1, &scratch));
	memcpy(bad_cols, cols, nnz * sizeof *cols);
	if (rank == 0)
		bad_cols[0] = N;
	report("column_rank0", fsai_matrix_create(N, first, nlocal, rp, bad_cols, vals, 0, &scratch));
	memcpy(bad_vals, vals, nnz * sizeof *vals);
	bad_vals[0] = NAN;
	report("value_nan", fsai_matrix_create(N, first, nlocal, rp, cols, bad_vals, 0, &scratch));
	report("nlocal_0", fsai_matrix_create(N, first, 0, rp, cols, vals, 0, &scratch));
	report("nlocal_above_n", fsai_matrix_create(N, first, N + 1, rp, cols, vals, 0, &scratch));
	report("n_0", fsai_matrix_create(0, first, nlocal, rp, cols, vals, 0, &scratch));
	report("rows_short_of_n", fsai_matrix_create(N + 1, first, nlocal, rp, cols, vals, 0, &scratch));
	report("base_2", fsai_matrix_create(N, first, nlocal, rp, cols, vals, 2, &scratch));
	report("row_ptr_null", fsai_matrix_create(N, first, nlocal, NULL, cols, vals, 0, &scratch));
	report("cols_null", fsai_matrix_create(N, first, nlocal, rp, NULL, vals, 0, &scratch));
	report("vals_null", fsai_matrix_create(N, first, nlocal, rp, cols, NULL, 0, &scratch));
	report("out_null", fsai_matrix_create(N, first, nlocal, rp, cols, vals, 0, NULL));

	report("matrix_create", fsai_matrix_create(N, first, nlocal, rp, cols, vals, 0, &m));
	report("matrix_create_base1", fsai_matrix_create(N, first + 1, nlocal, rp1, cols1, vals, 1, &m1));
	report("matrix_free_base1", fsai_matrix_free(m1));

	/* fsai_matrix_set_geometry: a freed handle, a block size the coarse
	 * space does not know, NULL coordinates (on one rank only: the others
	 * return FSAI_ERR_PEER); each leaves m without a geometry */
	double *coords = calloc(3 * nlocal, sizeof *coords);
	for (int64_t r = 0; r < nlocal; r++)
		coords[3 * r] = first + r;
	report("geometry_matrix_freed", fsai_matrix_set_geometry(m1, coords, 1));
	report("geometry_block_2", fsai_matrix_set_geometry(m, coords, 2));
	report("geometry_coords_null", fsai_matrix_set_geometry(m, NULL, 3));
	report("geometry_null_rank0", fsai_matrix_set_geometry(m, rank == 0 ? NULL : coords, 1));
	free(coords);
	fsai_options coarse_on;
	fsai_options_create(&coarse_on);
	fsai_options_set(coarse_on, "coarse", "on");
	fsai_options_set(coarse_on, "backend", "cpu");
	report("geometry_none_coarse_on", fsai_solver_create_opts(m, coarse_on, &scratch_s));
	fsai_options_free(coarse_on);

	/* fsai_solver_create: bad handles and options, a matrix the set-up
	 * refuses: the diagonal entry of global row 5 (A(6,6)) is -1 */
	report("solver_matrix_0", fsai_solver_create(0, "afsai", 0, 0, "cpu", &scratch_s));
	report("solver_matrix_freed", fsai_solver_create(m1, "afsai", 0, 0, "cpu", &scratch_s));
	report("solver_prec_ilu", fsai_solver_create(m, "ilu", 0, 0, "cpu", &scratch_s));
	report("solver_tol_2", fsai_solver_create(m, "afsai", 2, 0, "cpu", &scratch_s));
	report("solver_backend_gpu", fsai_solver_create(m, "afsai", 0, 0, "gpu", &scratch_s));
	report("solver_out_null", fsai_solver_create(m, "afsai", 0, 0, "cpu", NULL));
	memcpy(bad_vals, vals, nnz * sizeof *vals);
	int64_t d5 = diagonal(first, nlocal, rp, cols, 5);
	if (d5 >= 0)
		bad_vals[d5] = -1;
	report("matrix_not_spd", fsai_matrix_create(N, first, nlocal, rp, cols, bad_vals, 0, &neg));
	report("not_spd_afsai", fsai_solver_create(neg, "afsai", 0, 0, "cpu", &scratch_s));
	report("not_spd_fsai", fsai_solver_create(neg, "fsai", 0, 0, "cpu", &scratch_s));
	report("not_spd_jacobi", fsai_solver_create(neg, "jacobi", 0, 0, "cpu", &scratch_s));
	report("matrix_free_not_spd", fsai_matrix_free(neg));

	/* a solver, then misuse of it */
	report("solver_create", fsai_solver_create(m, "afsai", 1e-10, 0, "cpu", &s));
	double *b = calloc(nlocal, sizeof *b), *x = calloc(nlocal, sizeof *x), *x0 = calloc(nlocal, sizeof *x0);
	for (int64_t r = 0; r < nlocal; r++)
		for (int64_t k = rp[r]; k < rp[r + 1]; k++)
			b[r] += vals[k] * sin((double)cols[k]);
	int its0 = -1, its = -1;
	report("solve", fsai_solve(s, b, x0, &its0, NULL));
	/* the method named with the preconditioner, "method:prec": GMRES
	 * gives CG's iterate within the tolerance */
	double *xg = calloc(nlocal, sizeof *xg), diff = 0, norm = 0;
	fsai_solver g = 0;
	report("solver_create_gmres", fsai_solver_create(m, "gmres:jacobi", 1e-10, 0, "cpu", &g));
	report("solve_gmres", fsai_solve(g, b, xg, NULL, NULL));
	double *b2 = calloc(2 * nlocal, sizeof *b2), *x2 = calloc(2 * nlocal, sizeof *x2);
	report("solve_many_gmres", fsai_solve_many(g, 2, b2, x2, NULL, NULL));
	free(b2);
	free(x2);
	for (int64_t r = 0; r < nlocal; r++) {
		diff += (xg[r] - x0[r]) * (xg[r] - x0[r]);
		norm += x0[r] * x0[r];
	}
	int close = sqrt(diff) <= 1e-6 * sqrt(norm);
	fprintf(out, "%d gmres_gives_cg_iterate %d %s\n", rank, close ? 0 : 1, close ? "" : "GMRES's iterate is not CG's");
	report("solver_free_gmres", fsai_solver_free(g));
	/* SPAI, with BiCGSTAB: a solve to the tolerance; with CG: refused,
	 * M is not symmetric */
	memset(xg, 0, nlocal * sizeof *xg);
	report("solver_create_spai", fsai_solver_create(m, "bicgstab:spai", 1e-10, 0, "cpu", &g));
	report("solve_spai", fsai_solve(g, b, xg, NULL, NULL));
	report("solver_free_spai", fsai_solver_free(g));
	report("solver_cg_spai", fsai_solver_create(m, "cg:spai", 0, 0, "cpu", &scratch_s));
	free(xg);
	report("solver_method_minres", fsai_solver_create(m, "minres:jacobi", 0, 0, "cpu", &scratch_s));
	report("solve_handle_0", fsai_solve(0, b, x, NULL, NULL));
	report("solve_matrix_handle", fsai_solve(m, b, x, NULL, NULL));
	report("solve_b_null", fsai_solve(s, NULL, x, NULL, NULL));
	report("solve_many_k_0", fsai_solve_many(s, 0, b, x, NULL, NULL));
	memcpy(bad_vals, vals, nnz * sizeof *vals);
	if (d5 >= 0)
		bad_vals[d5] = -1;
	report("update_not_spd", fsai_update_values(s, bad_vals));
	memcpy(bad_vals, vals, nnz * sizeof *vals);
	bad_vals[nnz - 1] = NAN;
	report("update_nan", fsai_update_values(s, bad_vals));
	report("update_vals_null", fsai_update_values(s, NULL));
	/* after the failed updates the solver solves the old system as before */
	memset(x, 0, nlocal * sizeof *x);
	int code = fsai_solve(s, b, x, &its, NULL);
	int same = code == FSAI_OK && its == its0 && memcmp(x, x0, nlocal * sizeof *x) == 0;
	fprintf(out, "%d solve_after_failed_updates %d %s\n", rank, same ? 0 : 1,
	       same ? "" : "another iterate or iteration count than before the failed updates");
	report("matrix_free", fsai_matrix_free(m));
	report("matrix_free_twice", fsai_matrix_free(m));
	report("solver_matrix_after_free", fsai_solver_create(m, "afsai", 0, 0, "cpu", &scratch_s));
	report("solve_after_matrix_free", fsai_solve(s, b, x, NULL, NULL));
	report("solver_free", fsai_solver_free(s));
	report("solver_free_twice", fsai_solver_free(s));
	report("solve_after_free", fsai_solve(s, b, x, NULL, NULL));
	report("update_after_free", fsai_update_values(s, vals));
	report("set_values_after_free", fsai_set_values(s, vals));
	report("rebuild_after_free", fsai_rebuild(s));
	report("finalize", fsai_finalize());
	report("after_finalize", fsai_matrix_create(N, first, nlocal, rp, cols, vals, 0, &scratch));
	report("finalize_twice", fsai_finalize());
	fclose(out);
	MPI_Finalize();
	return 0;
}
