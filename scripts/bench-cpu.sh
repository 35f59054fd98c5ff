#!/usr/bin/env bash
# CPU benchmark against PETSc: distributed SpMV bandwidth and PCG-Jacobi time
# per iteration, fsai-dist and PETSc's CG+Jacobi on the same matrix in the
# same run, with 1 and 2 ranks, 100 iterations each.
# Usage: scripts/bench-cpu.sh [problem] [iterations] [outdir]
#   (default poisson7:128 100 $OUT or out/bench-cpu, which git ignores)
# Writes outdir/*.json and prints a table with the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --peers
. scripts/env.sh
problem=${1:-poisson7:128}
iters=${2:-100}
out=${3:-${OUT:-out/bench-cpu}}
mkdir -p "$out"
go build -o bin/fsai-dist ./cmd/fsai-dist
scripts/peers/build.sh bin/peers >/dev/null

for np in 1 2; do
  # exactly $iters iterations: a tolerance that is never reached (exit 3 expected)
  mpirun -np $np --bind-to core bin/fsai-dist -problem "$problem" -backend cpu -prec jacobi \
    -threads 1 -tol 1e-30 -maxit "$iters" -bench-spmv 100 -progress 0 \
    -report "$out/fsai-np$np.json" 2>/dev/null || [ $? -eq 3 ]
  mpirun -np $np --bind-to core bin/peers/petsc_cg -problem "$problem" -fixed-iters "$iters" \
    -json "$out/petsc-np$np.json" >/dev/null
done

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print(f"{'ranks':>5} {'fsai SpMV GB/s':>15} {'PETSc SpMV GB/s':>16} {'ratio':>6} {'fsai ms/it':>11} {'PETSc ms/it':>12} {'PETSc/fsai':>10}")
for np in (1, 2):
    f = json.load(open(f"{out}/fsai-np{np}.json"))
    p = json.load(open(f"{out}/petsc-np{np}.json"))
    fit, pit = f["iter_s"] * 1e3, p["time_per_iter_s"] * 1e3
    print(f"{np:>5} {f['spmv_gbs']:>15.2f} {p['spmv_gbs']:>16.2f} {f['spmv_gbs']/p['spmv_gbs']:>6.2f} {fit:>11.3f} {pit:>12.3f} {pit/fit:>10.2f}")
PY
