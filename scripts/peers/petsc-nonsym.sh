#!/usr/bin/env bash
# petsc-nonsym.sh: PETSc's BiCGSTAB (KSPBCGS) and GMRES(30) (KSPGMRES) on the
# shared nonsymmetric matrices, with Jacobi and with no preconditioner, on 1
# and 2 ranks: b = A*1, x0 = 0, right preconditioning, stop at
# ||b - A x||/||b|| <= tol (default 1e-8), at most 10000 iterations. Prints a
# Markdown table of iteration counts, a count that did not converge followed
# by PETSc's reason (limit: the iteration limit; breakdown; diverged: the
# residual grew 1e5-fold), and the largest true relative residual of the
# runs that converged.
#
#   scripts/peers/petsc-nonsym.sh [MATRIXDIR] [TOL]
#     (default ../shared/matrices/nonsym 1e-8; builds bin/peers first)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-../shared/matrices/nonsym}
tol=${2:-1e-8}
scripts/peers/build.sh bin/peers >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none

runs=("bcgs jacobi" "gmres jacobi" "bcgs none" "gmres none")
header="| matrix | n |"
rule="| --- | ---: |"
for run in "${runs[@]}"; do
  header+=" ${run% *} ${run#* } np1 / np2 |"
  rule+=" ---: |"
done
echo "$header max relres |"
echo "$rule ---: |"
for f in "$dir"/*.mtx; do
  line="" n="" worst=0
  for run in "${runs[@]}"; do
    cell=""
    for np in 1 2; do
      j=$(mpirun -np "$np" bin/peers/petsc_cg -matrix "$f" -method "${run% *}" -pc_type "${run#* }" \
        -tol "$tol" -maxit 10000 2>/dev/null | tail -n 1)
      n=$(jq -r .n <<<"$j")
      its=$(jq -r '.iterations as $i | {DIVERGED_ITS: "limit", DIVERGED_BREAKDOWN: "breakdown", DIVERGED_DTOL: "diverged"}[.reason] as $r |
        if .converged then $i else "\($i) \($r // .reason)" end' <<<"$j")
      worst=$(jq -r --argjson w "$worst" 'if .converged and .relres > $w then .relres else $w end' <<<"$j")
      cell+="${cell:+ / }$its"
    done
    line+=" $cell |"
  done
  echo "| $(basename "$f" .mtx) | $n |$line $(printf '%.2g' "$worst") |"
done
