/*
 * hypre_fsai.c: the hypre peer of fsai-dist. It solves A x = b with b = A*1 and
 * x0 = 0 by hypre's PCG (ParCSR) preconditioned with hypre's adaptive FSAI or
 * with Jacobi (diagonal scaling), stopping when ||r||_2 / ||b||_2 <= tol (two
 * norm of the unpreconditioned residual, no relative-change test, no absolute
 * tolerance). The result is one JSON object on stdout (and in -json PATH);
 * README.md lists its fields.
 *
 *   mpirun -np 2 hypre_fsai -problem poisson7:64 -prec fsai
 *   mpirun -np 2 hypre_fsai -matrix A.mtx -prec jacobi [-tol 1e-8] [-maxit 10000] [-json out.json]
 *   FSAI pattern: -fsai.steps K -fsai.step-size S -fsai.eps EPS (Kaporin tolerance)
 *
 * hypre's FSAI (2.26) builds G from each rank's diagonal block of A only: on
 * more than one rank it is a block-Jacobi FSAI, unlike fsai-dist's, whose
 * pattern reaches into the off-rank lower blocks.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hypre_common.h"
/* Internal header, installed with hypre: hypre_ParFSAIData gives the factor G,
 * whose size the public API does not report. */
#include <_hypre_parcsr_ls.h>

static const char usage[] =
  "usage: hypre_fsai (-problem poisson7:N | -matrix PATH.mtx) [-prec fsai|jacobi]\n"
  "       [-fsai.steps K] [-fsai.step-size S] [-fsai.eps EPS] [-tol T] [-maxit M] [-json PATH]\n";

typedef enum { PREC_FSAI, PREC_JACOBI } prec_kind;

typedef struct {
  const char *problem; /* "poisson7:N" or NULL */
  const char *matrix;  /* Matrix Market path or NULL */
  const char *json;    /* output path or NULL */
  prec_kind prec;
  int fsai_steps;      /* adaptive steps per row of G */
  int fsai_step_size;  /* entries added per step */
  double fsai_eps;     /* Kaporin reduction factor that stops a row */
  double tol;
  int maxit;
} options;

/* parse_options reads argv; defaults are hypre's own ij driver's FSAI
 * settings (5 steps of 3 entries, eps 1e-3), tol 1e-8, maxit 10000. */
static options parse_options(int argc, char **argv) {
  options o = {NULL, NULL, NULL, PREC_FSAI, 5, 3, 1e-3, 1e-8, 10000};
  int i;

  for (i = 1; i < argc; i++) {
    const char *flag = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(flag, "-h") || !strcmp(flag, "-help") || !strcmp(flag, "--help")) {
      fputs(usage, stdout);
      MPI_Finalize();
      exit(0);
    }
    if (!val) die("%s: missing value\n%s", flag, usage);
    i++;
    if (!strcmp(flag, "-problem")) o.problem = val;
    else if (!strcmp(flag, "-matrix")) o.matrix = val;
    else if (!strcmp(flag, "-json")) o.json = val;
    else if (!strcmp(flag, "-prec")) {
      if (!strcmp(val, "fsai")) o.prec = PREC_FSAI;
      else if (!strcmp(val, "jacobi")) o.prec = PREC_JACOBI;
      else die("-prec %s: want fsai or jacobi", val);
    } else if (!strcmp(flag, "-fsai.steps")) o.fsai_steps = parse_int(flag, val, 0);
    else if (!strcmp(flag, "-fsai.step-size")) o.fsai_step_size = parse_int(flag, val, 1);
    else if (!strcmp(flag, "-fsai.eps")) o.fsai_eps = parse_real(flag, val);
    else if (!strcmp(flag, "-tol")) o.tol = parse_real(flag, val);
    else if (!strcmp(flag, "-maxit")) o.maxit = parse_int(flag, val, 1);
    else die("unknown option %s\n%s", flag, usage);
  }
  if (!o.problem == !o.matrix) die("give exactly one of -problem poisson7:N and -matrix PATH.mtx\n%s", usage);
  if (o.tol >= 1) die("-tol %g: want tol < 1", o.tol);
  return o;
}

/* setup_precond attaches the preconditioner to pcg and returns the FSAI
 * object (NULL for Jacobi). */
static HYPRE_Solver setup_precond(HYPRE_Solver pcg, const options *o) {
  HYPRE_Solver fsai;

  if (o->prec == PREC_JACOBI) {
    HYPRE_CALL(HYPRE_ParCSRPCGSetPrecond(pcg, HYPRE_ParCSRDiagScale, HYPRE_ParCSRDiagScaleSetup, NULL));
    return NULL;
  }
  HYPRE_CALL(HYPRE_FSAICreate(&fsai));
  HYPRE_CALL(HYPRE_FSAISetAlgoType(fsai, 1)); /* adaptive, native */
  HYPRE_CALL(HYPRE_FSAISetMaxSteps(fsai, o->fsai_steps));
  HYPRE_CALL(HYPRE_FSAISetMaxStepSize(fsai, o->fsai_step_size));
  HYPRE_CALL(HYPRE_FSAISetKapTolerance(fsai, o->fsai_eps));
  /* As a preconditioner: one application z = G^T G r from a zero guess. */
  HYPRE_CALL(HYPRE_FSAISetMaxIterations(fsai, 1));
  HYPRE_CALL(HYPRE_FSAISetTolerance(fsai, 0.0));
  HYPRE_CALL(HYPRE_FSAISetZeroGuess(fsai, 1));
  /* No power iterations for omega: a scalar factor does not change PCG. */
  HYPRE_CALL(HYPRE_FSAISetEigMaxIters(fsai, 0));
  HYPRE_CALL(HYPRE_FSAISetPrintLevel(fsai, 0));
  HYPRE_CALL(HYPRE_ParCSRPCGSetPrecond(pcg, HYPRE_FSAISolve, HYPRE_FSAISetup, fsai));
  return fsai;
}

int main(int argc, char **argv) {
  options o;
  peer_rows rows;
  HYPRE_IJMatrix ij;
  HYPRE_ParCSRMatrix A;
  HYPRE_IJVector ijx, ijb, ijones, ijr;
  HYPRE_ParVector x, b, ones, r;
  HYPRE_Solver pcg, fsai;
  HYPRE_BigInt lo, hi;
  HYPRE_Int its, ierr;
  HYPRE_Real hypre_relres, rr, bb;
  int rank, size, converged;
  double t0, assembly_s, setup_s, solve_s, nnz, prec_nnz;
  peer_json j;
  char err[512];

  hypre_peer_name = "hypre_fsai";
  MPI_CALL(MPI_Init(&argc, &argv));
  MPI_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CALL(MPI_Comm_size(MPI_COMM_WORLD, &size));
  HYPRE_CALL(HYPRE_Init());
  o = parse_options(argc, argv);

  MPI_CALL(MPI_Barrier(MPI_COMM_WORLD));
  t0 = MPI_Wtime();
  load_rows(o.problem, o.matrix, size, rank, &rows);
  ij = build_matrix(&rows);
  HYPRE_CALL(HYPRE_IJMatrixGetObject(ij, (void **)&A));
  assembly_s = elapsed(t0);
  lo = (HYPRE_BigInt)rows.first;
  hi = (HYPRE_BigInt)(rows.first + rows.nrows) - 1;
  nnz = global_nnz((hypre_ParCSRMatrix *)A);

  /* b = A*1, x0 = 0 */
  ijones = new_vector(lo, hi, 1.0, &ones);
  ijb = new_vector(lo, hi, 0.0, &b);
  ijx = new_vector(lo, hi, 0.0, &x);
  ijr = new_vector(lo, hi, 0.0, &r);
  HYPRE_CALL(HYPRE_ParCSRMatrixMatvec(1.0, A, ones, 0.0, b));

  HYPRE_CALL(HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg));
  HYPRE_CALL(HYPRE_ParCSRPCGSetTol(pcg, o.tol));
  HYPRE_CALL(HYPRE_ParCSRPCGSetAbsoluteTol(pcg, 0.0));
  HYPRE_CALL(HYPRE_ParCSRPCGSetMaxIter(pcg, o.maxit));
  HYPRE_CALL(HYPRE_ParCSRPCGSetTwoNorm(pcg, 1));
  HYPRE_CALL(HYPRE_ParCSRPCGSetRelChange(pcg, 0));
  HYPRE_CALL(HYPRE_ParCSRPCGSetPrintLevel(pcg, 0));
  HYPRE_CALL(HYPRE_ParCSRPCGSetLogging(pcg, 1));
  fsai = setup_precond(pcg, &o);

  MPI_CALL(MPI_Barrier(MPI_COMM_WORLD));
  t0 = MPI_Wtime();
  HYPRE_CALL(HYPRE_ParCSRPCGSetup(pcg, A, b, x));
  setup_s = elapsed(t0);

  MPI_CALL(MPI_Barrier(MPI_COMM_WORLD));
  t0 = MPI_Wtime();
  ierr = HYPRE_ParCSRPCGSolve(pcg, A, b, x);
  solve_s = elapsed(t0);
  /* Hitting maxit sets HYPRE_ERROR_CONV: a result, not a failure. */
  converged = !(ierr & HYPRE_ERROR_CONV);
  if (!converged) HYPRE_ClearError(HYPRE_ERROR_CONV);
  HYPRE_CALL(ierr & ~HYPRE_ERROR_CONV);
  HYPRE_CALL(HYPRE_ParCSRPCGGetNumIterations(pcg, &its));
  HYPRE_CALL(HYPRE_ParCSRPCGGetFinalRelativeResidualNorm(pcg, &hypre_relres));

  /* true residual r = b - A x */
  HYPRE_CALL(HYPRE_ParVectorCopy(b, r));
  HYPRE_CALL(HYPRE_ParCSRMatrixMatvec(-1.0, A, x, 1.0, r));
  HYPRE_CALL(HYPRE_ParVectorInnerProd(r, r, &rr));
  HYPRE_CALL(HYPRE_ParVectorInnerProd(b, b, &bb));

  /* nnz of the preconditioner: G for FSAI (lower triangular, diagonal
   * included; G^T is not counted), the diagonal for Jacobi. */
  if (fsai)
    prec_nnz = global_nnz(hypre_ParFSAIDataGmat((hypre_ParFSAIData *)fsai));
  else
    prec_nnz = (double)rows.n;

  if (!converged && rank == 0)
    fprintf(stderr, "hypre_fsai: warning: not converged after %d iterations\n", (int)its);
  if (rank == 0) {
    peer_json_init(&j);
    peer_json_str(&j, "peer", "hypre");
    peer_json_str(&j, "prec", o.prec == PREC_FSAI ? "fsai" : "jacobi");
    peer_json_str(&j, "matrix", o.problem ? o.problem : o.matrix);
    peer_json_int(&j, "n", rows.n);
    peer_json_int(&j, "nnz", (int64_t)nnz);
    peer_json_int(&j, "ranks", size);
    peer_json_num(&j, "tol", o.tol);
    if (fsai) {
      peer_json_int(&j, "fsai_steps", o.fsai_steps);
      peer_json_int(&j, "fsai_step_size", o.fsai_step_size);
      peer_json_num(&j, "fsai_eps", o.fsai_eps);
    }
    peer_json_int(&j, "iterations", its);
    peer_json_bool(&j, "converged", converged);
    peer_json_num(&j, "relres", sqrt(rr / bb));
    peer_json_num(&j, "hypre_relres", hypre_relres);
    peer_json_num(&j, "assembly_s", assembly_s);
    peer_json_num(&j, "setup_s", setup_s);
    peer_json_num(&j, "solve_s", solve_s);
    peer_json_num(&j, "time_per_iter_s", its > 0 ? solve_s / its : NAN);
    peer_json_int(&j, "prec_nnz", (int64_t)prec_nnz);
    peer_json_num(&j, "prec_density", prec_nnz / nnz);
    if (peer_json_finish(&j, o.json, err, sizeof err) != 0) die("%s", err);
  }

  if (fsai) HYPRE_CALL(HYPRE_FSAIDestroy(fsai));
  HYPRE_CALL(HYPRE_ParCSRPCGDestroy(pcg));
  HYPRE_CALL(HYPRE_IJVectorDestroy(ijr));
  HYPRE_CALL(HYPRE_IJVectorDestroy(ijx));
  HYPRE_CALL(HYPRE_IJVectorDestroy(ijb));
  HYPRE_CALL(HYPRE_IJVectorDestroy(ijones));
  HYPRE_CALL(HYPRE_IJMatrixDestroy(ij));
  peer_rows_free(&rows);
  HYPRE_CALL(HYPRE_Finalize());
  MPI_CALL(MPI_Finalize());
  return 0;
}
