/*
 * geometry.c: the coarse space through the C API, for capi_test.go
 * (TestGeometryC). Every rank reads elasticity.bin, which the test writes
 * (n, nnz, row_ptr, cols, vals and the nodes' coordinates of a 3D
 * elasticity problem, three unknowns a node), takes its rows, gives their
 * coordinates to fsai_matrix_set_geometry and checks: aFSAI under the
 * default options (coarse "auto": the coarse space) solves A x = A w,
 * w_i = sin(0.1 i), to the tolerance in fewer iterations than with coarse
 * "off", and solves A x = A*1, a rigid translation, which the coarse space
 * holds, in at most two. Rank 0 prints "ok" when all passed.
 *
 *     mpirun -np 2 ./geometry_c
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsai.h"

static int rank, failed;

/* expect records a failure when code is not FSAI_OK. */
static void expect(int code, const char *what) {
	char msg[512] = "";
	if (code != FSAI_OK) {
		fsai_last_error(msg, sizeof msg);
		fprintf(stderr, "rank %d: %s: code %d: %s\n", rank, what, code, msg);
		failed = 1;
	}
}

/* readAll reads count items of size bytes from f into a new array. */
static void *readAll(FILE *f, size_t count, size_t size) {
	void *p = malloc(count * size);
	if (p == NULL || fread(p, size, count, f) != count) {
		fprintf(stderr, "rank %d: elasticity.bin: short read\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

/* solve makes a solver of A with the options o, solves A x = b from zero,
 * checks that it converged to the tolerance and that x is w, and returns
 * the iterations. */
static int solve(fsai_matrix A, fsai_options o, const double *b, const double *w, int64_t nlocal, const char *what) {
	fsai_solver s;
	double *x = calloc(nlocal, sizeof *x), relres = 1, err[2] = {0, 0};
	int its = -1;
	expect(fsai_solver_create_opts(A, o, &s), what);
	expect(fsai_solve(s, b, x, &its, &relres), what);
	expect(fsai_solver_free(s), what);
	for (int64_t i = 0; i < nlocal; i++) {
		err[0] += (x[i] - w[i]) * (x[i] - w[i]);
		err[1] += w[i] * w[i];
	}
	MPI_Allreduce(MPI_IN_PLACE, err, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (!(relres <= 1e-8) || !(sqrt(err[0]) <= 1e-5 * sqrt(err[1]))) {
		fprintf(stderr, "rank %d: %s: relres %g, error %g\n", rank, what, relres, sqrt(err[0] / err[1]));
		failed = 1;
	}
	free(x);
	return its;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	FILE *f = fopen("elasticity.bin", "rb");
	if (f == NULL) {
		perror("elasticity.bin");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int64_t *head = readAll(f, 2, sizeof(int64_t)), n = head[0], nnz = head[1];
	int64_t *rp = readAll(f, n + 1, sizeof *rp), *cols = readAll(f, nnz, sizeof *cols);
	double *vals = readAll(f, nnz, sizeof *vals), *coords = readAll(f, 3 * n, sizeof *coords);
	fclose(f);

	const int64_t first = n * rank / size, nlocal = n * (rank + 1) / size - first, k0 = rp[first];
	int64_t *lrp = malloc((nlocal + 1) * sizeof *lrp);
	double *bw = calloc(nlocal, sizeof *bw), *b1 = calloc(nlocal, sizeof *b1);
	double *w = malloc(nlocal * sizeof *w), *one = malloc(nlocal * sizeof *one);
	for (int64_t i = 0; i <= nlocal; i++)
		lrp[i] = rp[first + i] - k0;
	for (int64_t i = 0; i < nlocal; i++) {
		w[i] = sin(0.1 * (first + i));
		one[i] = 1;
		for (int64_t k = rp[first + i]; k < rp[first + i + 1]; k++) {
			bw[i] += vals[k] * sin(0.1 * cols[k]);
			b1[i] += vals[k];
		}
	}

	expect(fsai_init(MPI_Comm_c2f(MPI_COMM_WORLD)), "fsai_init");
	fsai_matrix A;
	fsai_options o;
	expect(fsai_matrix_create(n, first, nlocal, lrp, cols + k0, vals + k0, 0, &A), "fsai_matrix_create");
	expect(fsai_matrix_set_geometry(A, coords + 3 * first, 3), "fsai_matrix_set_geometry");
	expect(fsai_options_create(&o), "fsai_options_create");
	expect(fsai_options_set(o, "backend", "cpu"), "backend cpu");
	int its_coarse = solve(A, o, bw, w, nlocal, "A x = A w, coarse auto");
	int its_one = solve(A, o, b1, one, nlocal, "A x = A*1, coarse auto");
	expect(fsai_options_set(o, "coarse", "off"), "coarse off");
	int its_off = solve(A, o, bw, w, nlocal, "A x = A w, coarse off");
	if (its_coarse >= its_off || its_one > 2) {
		fprintf(stderr, "rank %d: iterations: coarse %d, coarse off %d, A*1 %d\n", rank, its_coarse, its_off, its_one);
		failed = 1;
	}
	expect(fsai_options_free(o), "fsai_options_free");
	expect(fsai_matrix_free(A), "fsai_matrix_free");
	expect(fsai_finalize(), "fsai_finalize");
	MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("iterations of A x = A w: coarse auto %d, coarse off %d; of A x = A*1: %d\n%s\n", its_coarse, its_off,
		       its_one, failed ? "FAILED" : "ok");
	MPI_Finalize();
	free(head);
	free(rp);
	free(cols);
	free(vals);
	free(coords);
	free(lrp);
	free(bw);
	free(b1);
	free(w);
	free(one);
	return failed;
}
