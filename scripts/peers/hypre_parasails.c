/*
 * hypre_parasails.c: the hypre peer of fsai-dist's SPAI. It solves A x = b
 * with b = A*1 and x0 = 0 by hypre's BiCGSTAB or GMRES(m) (ParCSR)
 * preconditioned with ParaSails, hypre's distributed sparse approximate
 * inverse (E. Chow: a priori patterns from powers of the thresholded A),
 * nonsymmetric (sym 0), stopping when hypre's relative residual norm
 * ||r||_2 / ||b||_2 <= tol (no absolute tolerance). The result is one JSON
 * object on stdout (and in -json PATH); README.md lists its fields.
 *
 *   mpirun -np 2 hypre_parasails -matrix A.mtx -method bicgstab
 *   mpirun -np 2 hypre_parasails -matrix A.mtx -method gmres -restart 30
 *     [-thresh 0.1] [-nlevels 1] [-filter 0.1] [-tol 1e-8] [-maxit 10000] [-json out.json]
 *
 * A solve that stops at the iteration limit or breaks down is reported
 * (converged false, hypre's error code in solve_error), not aborted.
 *
 * ParaSails' pattern is that of (A~)^(nlevels+1), A~ the entries of the
 * diagonally scaled matrix D^-1/2 A D^-1/2 of magnitude at least thresh;
 * filter then drops the entries of M below filter in magnitude (relative,
 * as ParaSails defines it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hypre_common.h"

static const char usage[] =
  "usage: hypre_parasails (-problem poisson7:N | -matrix PATH.mtx) [-method bicgstab|gmres] [-restart M]\n"
  "       [-thresh T] [-nlevels L] [-filter F] [-tol T] [-maxit M] [-json PATH]\n";

typedef struct {
  const char *problem, *matrix, *json;
  int gmres;    /* GMRES(restart), else BiCGSTAB */
  int restart;
  double thresh; /* ParaSails' threshold, in [0,1] */
  int nlevels;
  double filter; /* ParaSails' post-filter, 0: none */
  double tol;
  int maxit;
} options;

/* parse_options reads argv; the ParaSails defaults are hypre's (thresh 0.1,
 * nlevels 1, filter 0.1). */
static options parse_options(int argc, char **argv) {
  options o = {NULL, NULL, NULL, 0, 30, 0.1, 1, 0.1, 1e-8, 10000};
  for (int i = 1; i < argc; i++) {
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
    else if (!strcmp(flag, "-method")) {
      if (!strcmp(val, "bicgstab")) o.gmres = 0;
      else if (!strcmp(val, "gmres")) o.gmres = 1;
      else die("-method %s: want bicgstab or gmres", val);
    } else if (!strcmp(flag, "-restart")) o.restart = parse_int(flag, val, 1);
    else if (!strcmp(flag, "-thresh")) o.thresh = parse_real(flag, val);
    else if (!strcmp(flag, "-nlevels")) o.nlevels = parse_int(flag, val, 0);
    else if (!strcmp(flag, "-filter")) o.filter = strcmp(val, "0") ? parse_real(flag, val) : 0;
    else if (!strcmp(flag, "-tol")) o.tol = parse_real(flag, val);
    else if (!strcmp(flag, "-maxit")) o.maxit = parse_int(flag, val, 1);
    else die("unknown option %s\n%s", flag, usage);
  }
  if (!o.problem == !o.matrix) die("give exactly one of -problem poisson7:N and -matrix PATH.mtx\n%s", usage);
  if (o.tol >= 1) die("-tol %g: want tol < 1", o.tol);
  if (o.thresh > 1) die("-thresh %g: want a threshold in (0,1]", o.thresh);
  return o;
}

/* krylov is the method's calls, so that one code path drives either. */
typedef struct {
  HYPRE_Int (*setup)(HYPRE_Solver, HYPRE_ParCSRMatrix, HYPRE_ParVector, HYPRE_ParVector);
  HYPRE_Int (*solve)(HYPRE_Solver, HYPRE_ParCSRMatrix, HYPRE_ParVector, HYPRE_ParVector);
  HYPRE_Int (*iterations)(HYPRE_Solver, HYPRE_Int *);
  HYPRE_Int (*relres)(HYPRE_Solver, HYPRE_Real *);
  HYPRE_Int (*destroy)(HYPRE_Solver);
} krylov;

/* new_krylov creates the method with the tolerance, the limit and
 * ParaSails ps as its preconditioner. */
static HYPRE_Solver new_krylov(const options *o, HYPRE_Solver ps, krylov *k) {
  HYPRE_Solver s;
  if (o->gmres) {
    *k = (krylov){HYPRE_ParCSRGMRESSetup, HYPRE_ParCSRGMRESSolve, HYPRE_ParCSRGMRESGetNumIterations,
                  HYPRE_ParCSRGMRESGetFinalRelativeResidualNorm, HYPRE_ParCSRGMRESDestroy};
    HYPRE_CALL(HYPRE_ParCSRGMRESCreate(MPI_COMM_WORLD, &s));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetKDim(s, o->restart));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetTol(s, o->tol));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetAbsoluteTol(s, 0.0));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetMaxIter(s, o->maxit));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetLogging(s, 1));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetPrecond(s, HYPRE_ParaSailsSolve, HYPRE_ParaSailsSetup, ps));
    return s;
  }
  *k = (krylov){HYPRE_ParCSRBiCGSTABSetup, HYPRE_ParCSRBiCGSTABSolve, HYPRE_ParCSRBiCGSTABGetNumIterations,
                HYPRE_ParCSRBiCGSTABGetFinalRelativeResidualNorm, HYPRE_ParCSRBiCGSTABDestroy};
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABCreate(MPI_COMM_WORLD, &s));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetTol(s, o->tol));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetAbsoluteTol(s, 0.0));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetMaxIter(s, o->maxit));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetLogging(s, 1));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetPrecond(s, HYPRE_ParaSailsSolve, HYPRE_ParaSailsSetup, ps));
  return s;
}

int main(int argc, char **argv) {
  options o;
  peer_rows rows;
  HYPRE_IJMatrix ij, ijm;
  HYPRE_ParCSRMatrix A, M;
  HYPRE_IJVector ijx, ijb, ijones, ijr;
  HYPRE_ParVector x, b, ones, r;
  HYPRE_Solver ps, solver;
  krylov k;
  HYPRE_Int its, ierr;
  HYPRE_Real hypre_relres, rr, bb;
  int rank, size, converged;
  double t0, assembly_s, setup_s, solve_s, nnz, prec_nnz;
  peer_json j;
  char err[512];

  hypre_peer_name = "hypre_parasails";
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
  HYPRE_BigInt lo = (HYPRE_BigInt)rows.first, hi = (HYPRE_BigInt)(rows.first + rows.nrows) - 1;
  nnz = global_nnz((hypre_ParCSRMatrix *)A);

  /* b = A*1, x0 = 0 */
  ijones = new_vector(lo, hi, 1.0, &ones);
  ijb = new_vector(lo, hi, 0.0, &b);
  ijx = new_vector(lo, hi, 0.0, &x);
  ijr = new_vector(lo, hi, 0.0, &r);
  HYPRE_CALL(HYPRE_ParCSRMatrixMatvec(1.0, A, ones, 0.0, b));

  HYPRE_CALL(HYPRE_ParaSailsCreate(MPI_COMM_WORLD, &ps));
  HYPRE_CALL(HYPRE_ParaSailsSetSym(ps, 0));
  HYPRE_CALL(HYPRE_ParaSailsSetParams(ps, o.thresh, o.nlevels));
  HYPRE_CALL(HYPRE_ParaSailsSetFilter(ps, o.filter));
  solver = new_krylov(&o, ps, &k);

  /* the set-up of the method computes ParaSails' M */
  MPI_CALL(MPI_Barrier(MPI_COMM_WORLD));
  t0 = MPI_Wtime();
  HYPRE_CALL(k.setup(solver, A, b, x));
  setup_s = elapsed(t0);

  MPI_CALL(MPI_Barrier(MPI_COMM_WORLD));
  t0 = MPI_Wtime();
  ierr = k.solve(solver, A, b, x);
  solve_s = elapsed(t0);
  /* Hitting maxit sets HYPRE_ERROR_CONV, a breakdown of the method another
   * error: results of the solve (solve_error), not failures of the run. */
  converged = ierr == 0;
  HYPRE_ClearAllErrors();
  HYPRE_CALL(k.iterations(solver, &its));
  HYPRE_CALL(k.relres(solver, &hypre_relres));

  /* true residual r = b - A x */
  HYPRE_CALL(HYPRE_ParVectorCopy(b, r));
  HYPRE_CALL(HYPRE_ParCSRMatrixMatvec(-1.0, A, x, 1.0, r));
  HYPRE_CALL(HYPRE_ParVectorInnerProd(r, r, &rr));
  HYPRE_CALL(HYPRE_ParVectorInnerProd(b, b, &bb));
  converged = converged && isfinite(rr);

  HYPRE_CALL(HYPRE_ParaSailsBuildIJMatrix(ps, &ijm));
  HYPRE_CALL(HYPRE_IJMatrixGetObject(ijm, (void **)&M));
  prec_nnz = global_nnz((hypre_ParCSRMatrix *)M);

  if (!converged && rank == 0)
    fprintf(stderr, "hypre_parasails: warning: not converged after %d iterations\n", (int)its);
  if (rank == 0) {
    peer_json_init(&j);
    peer_json_str(&j, "peer", "hypre");
    peer_json_str(&j, "prec", "parasails");
    peer_json_str(&j, "method", o.gmres ? "gmres" : "bicgstab");
    if (o.gmres) peer_json_int(&j, "restart", o.restart);
    peer_json_str(&j, "matrix", o.problem ? o.problem : o.matrix);
    peer_json_int(&j, "n", rows.n);
    peer_json_int(&j, "nnz", (int64_t)nnz);
    peer_json_int(&j, "ranks", size);
    peer_json_num(&j, "tol", o.tol);
    peer_json_num(&j, "thresh", o.thresh);
    peer_json_int(&j, "nlevels", o.nlevels);
    peer_json_num(&j, "filter", o.filter);
    peer_json_int(&j, "iterations", its);
    peer_json_bool(&j, "converged", converged);
    peer_json_int(&j, "solve_error", ierr);
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

  HYPRE_CALL(HYPRE_IJMatrixDestroy(ijm));
  HYPRE_CALL(k.destroy(solver));
  HYPRE_CALL(HYPRE_ParaSailsDestroy(ps));
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
