#!/usr/bin/env bash
# spai-compare.sh: fsai-dist's SPAI against hypre's ParaSails, and against
# fsai-dist's Jacobi, with BiCGSTAB and GMRES(30) on the shared
# nonsymmetric matrices and on convdiff problems, on 1 and 2 ranks: b = A*1,
# x0 = 0, stop at ||b - A x||/||b|| <= 1e-8, at most 10000 iterations, one
# thread per rank. Prints a Markdown table: per run the iterations (a count
# followed by "limit" or "failed" did not converge; "failed" alone: the
# program stopped with an error), nnz(M)/nnz(A), the
# preconditioner's set-up and the solve in milliseconds (the slowest
# rank's). REPEATS (default 1) runs each variant that many times and keeps
# the fastest run (set-up plus solve), for a machine shared with other work.
#
#   scripts/peers/spai-compare.sh [MATRIXDIR] [PROBLEM...]
#     (default ../shared/matrices/nonsym convdiff:32:100 convdiff:64:100;
#      builds bin/fsai-dist, bin/mtxgen and bin/peers first)
#
# Variants: fsai-dist -prec jacobi; -prec spai at its default (-spai.tau 0.9
# -spai.k 1) and with -spai.k 2; ParaSails at hypre's defaults (thresh 0.1,
# filter 0.1) with nlevels 0 (the pattern of the thresholded A, as -spai.k
# 1) and 1 (its square, as -spai.k 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-../shared/matrices/nonsym}
shift || true
problems=("$@")
[ ${#problems[@]} -gt 0 ] || problems=(convdiff:32:100 convdiff:64:100)
. scripts/env.sh
go build -o bin/fsai-dist ./cmd/fsai-dist
go build -o bin/mtxgen ./scripts/mtxgen
scripts/peers/build.sh bin/peers >/dev/null
repeats=${REPEATS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

files=("$dir"/*.mtx)
for p in "${problems[@]}"; do
  bin/mtxgen -problem "$p" -out "$work/$p.mtx"
  files+=("$work/$p.mtx")
done

# fsai NP METHOD ARGS...: one fsai-dist run, as a table row's cells
fsai() {
  local np=$1 method=$2 r
  shift 2
  rm -f "$work"/r*.json
  for ((r = 1; r <= repeats; r++)); do
    mpirun -np "$np" bin/fsai-dist -matrix "$f" -solver "$method" -backend cpu -threads 1 -tol 1e-8 -maxit 10000 \
      -progress 0 -report "$work/r$r.json" "$@" >/dev/null 2>&1 || true
  done
  fastest "$work"/r*.json >"$work/r.json" || { echo "failed | | |"; return; }
  jq -r '(if .converged then "\(.iterations)" else "\(.iterations) \(if .reason == "max_iterations" then "limit" else "failed" end)" end)
    + " | \(.prec_density // 0 | . * 1000 | round / 1000) | \(.prec_setup_s * 1000 | . * 100 | round / 100) | \(.solve_s * 1000 | . * 100 | round / 100)"' "$work/r.json"
}

# fastest FILE...: the report of the run with the least set-up plus solve
# time (fsai-dist's prec_setup_s, hypre's setup_s); fails with no report.
fastest() {
  [ -f "$1" ] || return 1
  jq -s 'min_by((.prec_setup_s // .setup_s) + .solve_s)' "$@"
}

# parasails NP METHOD NLEVELS: one hypre run, as a table row's cells
parasails() {
  local np=$1 method=$2 levels=$3 r
  rm -f "$work"/h*.json
  for ((r = 1; r <= repeats; r++)); do
    mpirun -np "$np" bin/peers/hypre_parasails -matrix "$f" -method "$method" -nlevels "$levels" -tol 1e-8 \
      -maxit 10000 -json "$work/h$r.json" >/dev/null 2>&1 || true
  done
  fastest "$work"/h*.json >"$work/h.json" || { echo "failed | | |"; return; }
  jq -r '(if .converged then "\(.iterations)" elif .solve_error == 256 then "\(.iterations) limit" else "\(.iterations) failed" end)
    + " | \(.prec_density | . * 1000 | round / 1000) | \(.setup_s * 1000 | . * 100 | round / 100) | \(.solve_s * 1000 | . * 100 | round / 100)"' "$work/h.json"
}

echo "| matrix | method | np | preconditioner | iterations | nnz(M)/nnz(A) | set-up ms | solve ms |"
echo "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"
for f in "${files[@]}"; do
  name=$(basename "$f" .mtx)
  for method in bicgstab gmres; do
    for np in 1 2; do
      row="| $name | $method | $np"
      echo "$row | jacobi | $(fsai "$np" "$method" -prec jacobi) |"
      echo "$row | spai k 1 | $(fsai "$np" "$method" -prec spai) |"
      echo "$row | spai k 2 | $(fsai "$np" "$method" -prec spai -spai.k 2) |"
      echo "$row | ParaSails nlevels 0 | $(parasails "$np" "$method" 0) |"
      echo "$row | ParaSails nlevels 1 | $(parasails "$np" "$method" 1) |"
    done
  done
done
