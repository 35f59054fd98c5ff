/*
 * petsc_cg.c: the PETSc peer of fsai-dist. It solves A x = b with b = A*1 and
 * x0 = 0 by a Krylov method preconditioned with Jacobi (PCJACOBI): CG
 * (KSPCG, the default), BiCGSTAB (KSPBCGS) or restarted GMRES (KSPGMRES,
 * classical Gram-Schmidt with one reorthogonalization), the last two
 * preconditioned on the right. It stops when ||b - A x||_2 / ||b||_2 <= tol
 * (unpreconditioned norm, no absolute tolerance) as fsai-dist does, then
 * times 100 SpMVs. The result is one JSON object on stdout (and in -json
 * PATH); README.md lists its fields.
 *
 *   mpirun -np 2 petsc_cg -problem poisson7:64 [-tol 1e-8] [-maxit 10000]
 *   mpirun -np 2 petsc_cg -matrix A.mtx|A.petsc [-fixed-iters K] [-json out.json]
 *   mpirun -np 2 petsc_cg -matrix A.mtx -method bcgs|gmres [-restart 30]
 *
 * Other PETSc options (-ksp_*, -pc_*, -mat_type, -log_view) still apply.
 */
#include <petscksp.h>

#include "peers_common.h"

static const char help[] =
  "Krylov + Jacobi peer of fsai-dist.\n"
  "  -method cg|bcgs|gmres Krylov method (default cg; bcgs and gmres right-preconditioned)\n"
  "  -restart M            GMRES restart length (default 30)\n"
  "  -problem poisson7:N   generate the 7-point Laplacian on an N^3 grid\n"
  "  -matrix PATH          read a matrix: Matrix Market if PATH ends in .mtx, else PETSc binary\n"
  "  -tol T                relative tolerance on ||r||_2/||b||_2 (default 1e-8)\n"
  "  -maxit M              iteration limit (default 10000)\n"
  "  -fixed-iters K        run exactly K iterations (timing; no stop test)\n"
  "  -json PATH            also write the JSON result to PATH\n";

/* spmv_reps is how many MatMult calls the SpMV timing averages over. */
enum { spmv_reps = 100 };

typedef struct {
  char problem[256];
  char matrix[PETSC_MAX_PATH_LEN];
  char json[PETSC_MAX_PATH_LEN];
  PetscReal tol;
  PetscInt maxit;
  PetscInt fixed_iters; /* > 0: run exactly this many iterations */
  char method[16];      /* cg, bcgs or gmres */
  PetscInt restart;     /* GMRES restart length */
} Options;

static PetscErrorCode GetOptions(Options *o) {
  PetscBool has_problem, has_matrix, set;

  PetscFunctionBeginUser;
  o->tol = 1e-8;
  o->maxit = 10000;
  o->fixed_iters = 0;
  o->json[0] = '\0';
  o->restart = 30;
  PetscCall(PetscStrncpy(o->method, "cg", sizeof o->method));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-method", o->method, sizeof o->method, &set));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-restart", &o->restart, &set));
  PetscCheck(strcmp(o->method, "cg") == 0 || strcmp(o->method, "bcgs") == 0 || strcmp(o->method, "gmres") == 0,
             PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-method %s: want cg, bcgs or gmres", o->method);
  PetscCheck(o->restart > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-restart must be positive");
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", o->problem, sizeof o->problem, &has_problem));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-matrix", o->matrix, sizeof o->matrix, &has_matrix));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-json", o->json, sizeof o->json, &set));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &o->tol, &set));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-maxit", &o->maxit, &set));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-fixed-iters", &o->fixed_iters, &set));
  PetscCheck(has_problem != has_matrix, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG,
             "give exactly one of -problem poisson7:N and -matrix PATH");
  PetscCheck(o->tol > 0 && o->tol < 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-tol %g: want 0 < tol < 1",
             (double)o->tol);
  PetscCheck(o->maxit > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-maxit must be positive");
  PetscCheck(o->fixed_iters >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-fixed-iters must be >= 0");
  if (!has_problem) o->problem[0] = '\0';
  if (!has_matrix) o->matrix[0] = '\0';
  PetscFunctionReturn(0);
}

/* CheckPeer turns a failure (rc != 0) of the peers_common helpers into the
 * PETSc error code with message err. */
static PetscErrorCode CheckPeer(int rc, PetscErrorCode code, const char *err) {
  PetscFunctionBeginUser;
  PetscCheck(rc == 0, PETSC_COMM_SELF, code, "%s", err);
  PetscFunctionReturn(0);
}

/* MatFromRows assembles an AIJ matrix (MPIAIJ on more than one rank) from each
 * rank's stripe, preallocating the diagonal and off-diagonal blocks exactly. */
static PetscErrorCode MatFromRows(const peer_rows *r, Mat *A) {
  PetscInt *d_nnz, *o_nnz, *cols, maxrow = 0;
  int64_t i, k, hi = r->first + r->nrows;

  PetscFunctionBeginUser;
  PetscCheck(r->n <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "n = %lld does not fit PetscInt (build PETSc with 64-bit indices)", (long long)r->n);
  PetscCall(PetscMalloc2(r->nrows, &d_nnz, r->nrows, &o_nnz));
  for (i = 0; i < r->nrows; i++) {
    d_nnz[i] = o_nnz[i] = 0;
    for (k = r->rowptr[i]; k < r->rowptr[i + 1]; k++) {
      if (r->col[k] >= r->first && r->col[k] < hi) d_nnz[i]++;
      else o_nnz[i]++;
    }
    maxrow = PetscMax(maxrow, d_nnz[i] + o_nnz[i]);
  }

  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, (PetscInt)r->nrows, (PetscInt)r->nrows, (PetscInt)r->n, (PetscInt)r->n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, d_nnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, d_nnz, 0, o_nnz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));

  PetscCall(PetscMalloc1(maxrow > 0 ? maxrow : 1, &cols));
  for (i = 0; i < r->nrows; i++) {
    PetscInt row = (PetscInt)(r->first + i), len = (PetscInt)(r->rowptr[i + 1] - r->rowptr[i]);
    for (k = 0; k < len; k++) cols[k] = (PetscInt)r->col[r->rowptr[i] + k];
    PetscCall(MatSetValues(*A, 1, &row, len, cols, r->val + r->rowptr[i], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree(cols));
  PetscCall(PetscFree2(d_nnz, o_nnz));
  PetscFunctionReturn(0);
}

/* HasSuffix says whether s ends with suffix. */
static PetscBool HasSuffix(const char *s, const char *suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && strcmp(s + ls - lx, suffix) == 0 ? PETSC_TRUE : PETSC_FALSE;
}

/* LoadMatrix builds A from -problem (each rank generates its rows), from a
 * Matrix Market file (each rank reads the file and keeps its rows) or from a
 * PETSc binary file (MatLoad). */
static PetscErrorCode LoadMatrix(const Options *o, Mat *A) {
  PetscMPIInt rank, size;
  peer_rows rows;
  char err[512];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (o->problem[0]) {
    int64_t N, lo, hi;
    PetscCall(CheckPeer(peer_parse_poisson7(o->problem, &N, err, sizeof err), PETSC_ERR_ARG_WRONG, err));
    peer_split(N * N * N, size, rank, &lo, &hi);
    PetscCall(CheckPeer(peer_poisson7(N, lo, hi, &rows, err, sizeof err), PETSC_ERR_MEM, err));
  } else if (HasSuffix(o->matrix, ".mtx")) {
    PetscCall(CheckPeer(peer_read_mm(o->matrix, size, rank, &rows, err, sizeof err), PETSC_ERR_FILE_READ, err));
  } else {
    PetscViewer viewer;
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, o->matrix, FILE_MODE_READ, &viewer));
    PetscCall(MatCreate(PETSC_COMM_WORLD, A));
    PetscCall(MatSetType(*A, MATAIJ));
    PetscCall(MatSetFromOptions(*A));
    PetscCall(MatLoad(*A, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
    PetscFunctionReturn(0);
  }
  PetscCall(MatFromRows(&rows, A));
  peer_rows_free(&rows);
  PetscFunctionReturn(0);
}

/* Elapsed returns the slowest rank's seconds since t0 (its own MPI_Wtime). */
static PetscErrorCode Elapsed(double t0, double *s) {
  double local = MPI_Wtime() - t0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&local, s, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* TimeSpMV returns the seconds per y = A x, averaged over spmv_reps calls
 * after one warm-up call. */
static PetscErrorCode TimeSpMV(Mat A, Vec x, double *seconds) {
  Vec y;
  double t0;
  int rep;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(x, &y));
  PetscCall(MatMult(A, x, y));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  t0 = MPI_Wtime();
  for (rep = 0; rep < spmv_reps; rep++) PetscCall(MatMult(A, x, y));
  PetscCall(Elapsed(t0, seconds));
  *seconds /= spmv_reps;
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* ConfigureKSP sets up o->method + Jacobi with fsai-dist's stop test, or a
 * fixed iteration count with no stop test when o->fixed_iters > 0. BiCGSTAB
 * and GMRES are preconditioned on the right, so the norm they monitor is the
 * unpreconditioned residual's; GMRES restarts every o->restart steps and
 * reorthogonalizes once (CGS2). */
static PetscErrorCode ConfigureKSP(KSP ksp, Mat A, const Options *o) {
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(KSPSetOperators(ksp, A, A));
  if (strcmp(o->method, "cg") == 0) {
    PetscCall(KSPSetType(ksp, KSPCG));
  } else {
    PetscCall(KSPSetType(ksp, strcmp(o->method, "bcgs") == 0 ? KSPBCGS : KSPGMRES));
    PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
  }
  if (strcmp(o->method, "gmres") == 0) {
    PetscCall(KSPGMRESSetRestart(ksp, o->restart));
    PetscCall(KSPGMRESSetCGSRefinementType(ksp, KSP_GMRES_CGS_REFINE_ALWAYS));
  }
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  if (o->fixed_iters > 0) /* rtol, abstol 0 and no divergence test: runs K iterations */
    PetscCall(KSPSetTolerances(ksp, 0.0, 0.0, PETSC_MAX_REAL, o->fixed_iters));
  else /* abstol 0: the test is ||r||/||b|| <= tol alone (||r0|| = ||b|| as x0 = 0) */
    PetscCall(KSPSetTolerances(ksp, o->tol, 0.0, PETSC_DEFAULT, o->maxit));
  PetscCall(KSPSetFromOptions(ksp));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  Options o;
  Mat A;
  Vec x, b, ones, r;
  KSP ksp;
  MatInfo info;
  KSPConvergedReason reason;
  PetscInt n, its;
  PetscReal rnorm, bnorm;
  PetscMPIInt rank, size;
  double t0, assembly_s, setup_s, solve_s, spmv_s, nnz, bytes;
  peer_json j;
  char err[512];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(GetOptions(&o));

  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  t0 = MPI_Wtime();
  PetscCall(LoadMatrix(&o, &A));
  PetscCall(Elapsed(t0, &assembly_s));
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  nnz = info.nz_used;

  /* b = A*1, x0 = 0 */
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &ones));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMult(A, ones, b));
  PetscCall(VecSet(x, 0.0));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(ConfigureKSP(ksp, A, &o));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  t0 = MPI_Wtime();
  PetscCall(KSPSetUp(ksp));
  PetscCall(Elapsed(t0, &setup_s));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  t0 = MPI_Wtime();
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(Elapsed(t0, &solve_s));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));

  /* true residual ||b - A x|| / ||b|| */
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));

  PetscCall(TimeSpMV(A, ones, &spmv_s));
  /* values + column indices, row pointers, x read once, y written */
  bytes = 12.0 * nnz + 4.0 * ((double)n + 1) + 16.0 * (double)n;

  if (o.fixed_iters == 0 && reason < 0)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc_cg: warning: %s not converged: %s after %d iterations\n",
                          o.method, KSPConvergedReasons[reason], (int)its));
  if (rank == 0) {
    peer_json_init(&j);
    peer_json_str(&j, "peer", "petsc");
    peer_json_str(&j, "method", o.method);
    if (strcmp(o.method, "gmres") == 0) peer_json_int(&j, "restart", o.restart);
    peer_json_str(&j, "matrix", o.problem[0] ? o.problem : o.matrix);
    peer_json_int(&j, "n", n);
    peer_json_int(&j, "nnz", (int64_t)nnz);
    peer_json_int(&j, "ranks", size);
    peer_json_num(&j, "tol", o.fixed_iters > 0 ? NAN : o.tol); /* null: no stop test */
    peer_json_int(&j, "iterations", its);
    peer_json_bool(&j, "converged", reason > 0);
    peer_json_str(&j, "reason", KSPConvergedReasons[reason]);
    peer_json_num(&j, "relres", rnorm / bnorm);
    peer_json_num(&j, "assembly_s", assembly_s);
    peer_json_num(&j, "setup_s", setup_s);
    peer_json_num(&j, "solve_s", solve_s);
    peer_json_num(&j, "time_per_iter_s", its > 0 ? solve_s / its : NAN);
    peer_json_num(&j, "spmv_s", spmv_s);
    peer_json_num(&j, "spmv_gbs", bytes / spmv_s / 1e9);
    PetscCall(CheckPeer(peer_json_finish(&j, o.json, err, sizeof err), PETSC_ERR_FILE_WRITE, err));
  }

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&ones));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
