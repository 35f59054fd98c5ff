/*
 * hypre_fsai.c: the hypre peer of fsai-dist. It solves A x = b with b = A*1
 * (-rhs random: A*u, u as fsai-dist's -random-rhs) and x0 = 0 by hypre's PCG
 * (ParCSR) preconditioned with hypre's adaptive FSAI, with Jacobi (diagonal
 * scaling) or with one V-cycle of BoomerAMG (-prec amg, -amg.functions 3 for
 * three unknowns a node, numbered node by node: systems AMG with the
 * unknown approach; -amg.threshold its strength threshold), stopping when
 * ||r||_2 / ||b||_2 <= tol (two
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
  "usage: hypre_fsai (-problem poisson7:N | -matrix PATH.mtx) [-prec fsai|jacobi|amg] [-rhs ones|random]\n"
  "       [-fsai.steps K] [-fsai.step-size S] [-fsai.eps EPS] [-amg.functions F] [-amg.threshold T]\n"
  "       [-tol T] [-maxit M] [-json PATH]\n";

typedef enum { PREC_FSAI, PREC_JACOBI, PREC_AMG } prec_kind;

typedef struct {
  common_options c;    /* the matrix, -json, -tol, -maxit */
  prec_kind prec;
  int fsai_steps;      /* adaptive steps per row of G */
  int fsai_step_size;  /* entries added per step */
  double fsai_eps;     /* Kaporin reduction factor that stops a row */
  int amg_functions;   /* unknowns a node for systems AMG */
  double amg_threshold; /* strength threshold */
} options;

/* parse_options reads argv; defaults are hypre's own ij driver's FSAI
 * settings (5 steps of 3 entries, eps 1e-3), BoomerAMG's (one function,
 * threshold 0.25), tol 1e-8, maxit 10000. */
static options parse_options(int argc, char **argv) {
  options o = {{NULL, NULL, NULL, 1e-8, 10000, 0}, PREC_FSAI, 5, 3, 1e-3, 1, 0.25};

  for (int i = 1; i < argc; i++) {
    const char *flag = argv[i], *val = flag_value(argc, argv, i, usage);
    i++;
    if (common_flag(&o.c, flag, val)) continue;
    if (!strcmp(flag, "-prec")) {
      if (!strcmp(val, "fsai")) o.prec = PREC_FSAI;
      else if (!strcmp(val, "jacobi")) o.prec = PREC_JACOBI;
      else if (!strcmp(val, "amg")) o.prec = PREC_AMG;
      else die("-prec %s: want fsai, jacobi or amg", val);
    } else if (!strcmp(flag, "-fsai.steps")) o.fsai_steps = parse_int(flag, val, 0);
    else if (!strcmp(flag, "-fsai.step-size")) o.fsai_step_size = parse_int(flag, val, 1);
    else if (!strcmp(flag, "-fsai.eps")) o.fsai_eps = parse_real(flag, val);
    else if (!strcmp(flag, "-amg.functions")) o.amg_functions = parse_int(flag, val, 1);
    else if (!strcmp(flag, "-amg.threshold")) o.amg_threshold = parse_real(flag, val);
    else die("unknown option %s\n%s", flag, usage);
  }
  check_common(&o.c, usage);
  return o;
}

/* setup_precond attaches the preconditioner to pcg and returns the FSAI or
 * BoomerAMG object (NULL for Jacobi). */
static HYPRE_Solver setup_precond(HYPRE_Solver pcg, const options *o) {
  HYPRE_Solver fsai, amg;

  if (o->prec == PREC_AMG) {
    HYPRE_CALL(HYPRE_BoomerAMGCreate(&amg));
    HYPRE_CALL(HYPRE_BoomerAMGSetMaxIter(amg, 1)); /* one V-cycle a preconditioner application */
    HYPRE_CALL(HYPRE_BoomerAMGSetTol(amg, 0.0));
    HYPRE_CALL(HYPRE_BoomerAMGSetNumFunctions(amg, o->amg_functions));
    HYPRE_CALL(HYPRE_BoomerAMGSetStrongThreshold(amg, o->amg_threshold));
    HYPRE_CALL(HYPRE_BoomerAMGSetPrintLevel(amg, 0));
    HYPRE_CALL(HYPRE_ParCSRPCGSetPrecond(pcg, HYPRE_BoomerAMGSolve, HYPRE_BoomerAMGSetup, amg));
    return amg;
  }

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
  hypre_system s;
  HYPRE_Solver pcg, pc;
  HYPRE_Int its, ierr;
  HYPRE_Real hypre_relres;
  int converged;
  double t0, setup_s, solve_s, prec_nnz, relres;
  peer_json j;
  char err[512];

  system_start(&s, "hypre_fsai", &argc, &argv);
  o = parse_options(argc, argv);
  system_load(&s, o.c.problem, o.c.matrix);
  if (o.c.random_rhs) system_random_rhs(&s);

  HYPRE_CALL(HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg));
  HYPRE_CALL(HYPRE_ParCSRPCGSetTol(pcg, o.c.tol));
  HYPRE_CALL(HYPRE_ParCSRPCGSetAbsoluteTol(pcg, 0.0));
  HYPRE_CALL(HYPRE_ParCSRPCGSetMaxIter(pcg, o.c.maxit));
  HYPRE_CALL(HYPRE_ParCSRPCGSetTwoNorm(pcg, 1));
  HYPRE_CALL(HYPRE_ParCSRPCGSetRelChange(pcg, 0));
  HYPRE_CALL(HYPRE_ParCSRPCGSetPrintLevel(pcg, 0));
  HYPRE_CALL(HYPRE_ParCSRPCGSetLogging(pcg, 1));
  pc = setup_precond(pcg, &o);

  t0 = start_clock();
  HYPRE_CALL(HYPRE_ParCSRPCGSetup(pcg, s.A, s.b, s.x));
  setup_s = elapsed(t0);

  t0 = start_clock();
  ierr = HYPRE_ParCSRPCGSolve(pcg, s.A, s.b, s.x);
  solve_s = elapsed(t0);
  /* Hitting maxit sets HYPRE_ERROR_CONV: a result, not a failure. */
  converged = !(ierr & HYPRE_ERROR_CONV);
  if (!converged) HYPRE_ClearError(HYPRE_ERROR_CONV);
  HYPRE_CALL(ierr & ~HYPRE_ERROR_CONV);
  HYPRE_CALL(HYPRE_ParCSRPCGGetNumIterations(pcg, &its));
  HYPRE_CALL(HYPRE_ParCSRPCGGetFinalRelativeResidualNorm(pcg, &hypre_relres));
  relres = system_relres(&s);

  /* nnz of the preconditioner: G for FSAI (lower triangular, diagonal
   * included; G^T is not counted), the diagonal for Jacobi, the operators
   * of every level for AMG (prec_density is then its operator complexity). */
  if (o.prec == PREC_FSAI)
    prec_nnz = global_nnz(hypre_ParFSAIDataGmat((hypre_ParFSAIData *)pc));
  else if (o.prec == PREC_AMG) {
    hypre_ParAMGData *d = (hypre_ParAMGData *)pc;
    prec_nnz = 0;
    for (int l = 0; l < hypre_ParAMGDataNumLevels(d); l++) prec_nnz += global_nnz(hypre_ParAMGDataAArray(d)[l]);
  } else
    prec_nnz = (double)s.rows.n;

  if (!converged && s.rank == 0)
    fprintf(stderr, "hypre_fsai: warning: not converged after %d iterations\n", (int)its);
  if (s.rank == 0) {
    system_json_head(&s, &j, o.prec == PREC_FSAI ? "fsai" : o.prec == PREC_AMG ? "amg" : "jacobi", o.c.problem ? o.c.problem : o.c.matrix, o.c.tol);
    peer_json_int(&j, "random_rhs", o.c.random_rhs);
    if (o.prec == PREC_AMG) {
      peer_json_int(&j, "amg_functions", o.amg_functions);
      peer_json_num(&j, "amg_threshold", o.amg_threshold);
    }
    if (o.prec == PREC_FSAI) {
      peer_json_int(&j, "fsai_steps", o.fsai_steps);
      peer_json_int(&j, "fsai_step_size", o.fsai_step_size);
      peer_json_num(&j, "fsai_eps", o.fsai_eps);
    }
    system_json(&s, &j, its, converged, relres, hypre_relres, setup_s, solve_s, prec_nnz);
    if (peer_json_finish(&j, o.c.json, err, sizeof err) != 0) die("%s", err);
  }

  if (o.prec == PREC_FSAI) HYPRE_CALL(HYPRE_FSAIDestroy(pc));
  if (o.prec == PREC_AMG) HYPRE_CALL(HYPRE_BoomerAMGDestroy(pc));
  HYPRE_CALL(HYPRE_ParCSRPCGDestroy(pcg));
  system_finish(&s);
  return 0;
}
