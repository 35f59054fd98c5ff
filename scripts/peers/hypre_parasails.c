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
  common_options c; /* the matrix, -json, -tol, -maxit */
  int gmres;        /* GMRES(restart), else BiCGSTAB */
  int restart;
  double thresh;    /* ParaSails' threshold, in [0,1] */
  int nlevels;
  double filter;    /* ParaSails' post-filter, 0: none */
} options;

/* parse_options reads argv; the ParaSails defaults are hypre's (thresh 0.1,
 * nlevels 1, filter 0.1). */
static options parse_options(int argc, char **argv) {
  options o = {{NULL, NULL, NULL, 1e-8, 10000, 0}, 0, 30, 0.1, 1, 0.1};
  for (int i = 1; i < argc; i++) {
    const char *flag = argv[i], *val = flag_value(argc, argv, i, usage);
    i++;
    if (common_flag(&o.c, flag, val)) continue;
    if (!strcmp(flag, "-method")) {
      if (!strcmp(val, "bicgstab")) o.gmres = 0;
      else if (!strcmp(val, "gmres")) o.gmres = 1;
      else die("-method %s: want bicgstab or gmres", val);
    } else if (!strcmp(flag, "-restart")) o.restart = parse_int(flag, val, 1);
    else if (!strcmp(flag, "-thresh")) o.thresh = parse_real(flag, val);
    else if (!strcmp(flag, "-nlevels")) o.nlevels = parse_int(flag, val, 0);
    else if (!strcmp(flag, "-filter")) o.filter = strcmp(val, "0") ? parse_real(flag, val) : 0;
    else die("unknown option %s\n%s", flag, usage);
  }
  check_common(&o.c, usage);
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
    HYPRE_CALL(HYPRE_ParCSRGMRESSetTol(s, o->c.tol));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetAbsoluteTol(s, 0.0));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetMaxIter(s, o->c.maxit));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetLogging(s, 1));
    HYPRE_CALL(HYPRE_ParCSRGMRESSetPrecond(s, HYPRE_ParaSailsSolve, HYPRE_ParaSailsSetup, ps));
    return s;
  }
  *k = (krylov){HYPRE_ParCSRBiCGSTABSetup, HYPRE_ParCSRBiCGSTABSolve, HYPRE_ParCSRBiCGSTABGetNumIterations,
                HYPRE_ParCSRBiCGSTABGetFinalRelativeResidualNorm, HYPRE_ParCSRBiCGSTABDestroy};
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABCreate(MPI_COMM_WORLD, &s));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetTol(s, o->c.tol));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetAbsoluteTol(s, 0.0));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetMaxIter(s, o->c.maxit));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetLogging(s, 1));
  HYPRE_CALL(HYPRE_ParCSRBiCGSTABSetPrecond(s, HYPRE_ParaSailsSolve, HYPRE_ParaSailsSetup, ps));
  return s;
}

int main(int argc, char **argv) {
  options o;
  hypre_system s;
  HYPRE_IJMatrix ijm;
  HYPRE_ParCSRMatrix M;
  HYPRE_Solver ps, solver;
  krylov k;
  HYPRE_Int its, ierr;
  HYPRE_Real hypre_relres;
  int converged;
  double t0, setup_s, solve_s, prec_nnz, relres;
  peer_json j;
  char err[512];

  system_start(&s, "hypre_parasails", &argc, &argv);
  o = parse_options(argc, argv);
  system_load(&s, o.c.problem, o.c.matrix);
  if (o.c.random_rhs) system_random_rhs(&s);

  HYPRE_CALL(HYPRE_ParaSailsCreate(MPI_COMM_WORLD, &ps));
  HYPRE_CALL(HYPRE_ParaSailsSetSym(ps, 0));
  HYPRE_CALL(HYPRE_ParaSailsSetParams(ps, o.thresh, o.nlevels));
  HYPRE_CALL(HYPRE_ParaSailsSetFilter(ps, o.filter));
  solver = new_krylov(&o, ps, &k);

  /* the set-up of the method computes ParaSails' M */
  t0 = start_clock();
  HYPRE_CALL(k.setup(solver, s.A, s.b, s.x));
  setup_s = elapsed(t0);

  t0 = start_clock();
  ierr = k.solve(solver, s.A, s.b, s.x);
  solve_s = elapsed(t0);
  /* Hitting maxit sets HYPRE_ERROR_CONV, a breakdown of the method another
   * error: results of the solve (solve_error), not failures of the run. */
  HYPRE_ClearAllErrors();
  HYPRE_CALL(k.iterations(solver, &its));
  HYPRE_CALL(k.relres(solver, &hypre_relres));
  relres = system_relres(&s);
  converged = ierr == 0 && isfinite(relres);

  HYPRE_CALL(HYPRE_ParaSailsBuildIJMatrix(ps, &ijm));
  HYPRE_CALL(HYPRE_IJMatrixGetObject(ijm, (void **)&M));
  prec_nnz = global_nnz((hypre_ParCSRMatrix *)M);

  if (!converged && s.rank == 0)
    fprintf(stderr, "hypre_parasails: warning: not converged after %d iterations\n", (int)its);
  if (s.rank == 0) {
    system_json_head(&s, &j, "parasails", o.c.problem ? o.c.problem : o.c.matrix, o.c.tol);
    peer_json_str(&j, "method", o.gmres ? "gmres" : "bicgstab");
    if (o.gmres) peer_json_int(&j, "restart", o.restart);
    peer_json_num(&j, "thresh", o.thresh);
    peer_json_int(&j, "nlevels", o.nlevels);
    peer_json_num(&j, "filter", o.filter);
    peer_json_int(&j, "solve_error", ierr);
    system_json(&s, &j, its, converged, relres, hypre_relres, setup_s, solve_s, prec_nnz);
    if (peer_json_finish(&j, o.c.json, err, sizeof err) != 0) die("%s", err);
  }

  HYPRE_CALL(HYPRE_IJMatrixDestroy(ijm));
  HYPRE_CALL(k.destroy(solver));
  HYPRE_CALL(HYPRE_ParaSailsDestroy(ps));
  system_finish(&s);
  return 0;
}
