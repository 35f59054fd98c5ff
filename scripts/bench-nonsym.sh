#!/usr/bin/env bash
# CPU benchmark of the nonsymmetric methods against PETSc: fsai-dist's
# BiCGSTAB and GMRES(30) with Jacobi against PETSc's KSPBCGS and KSPGMRES
# (restart 30, right preconditioning, unpreconditioned norm, CGS with one
# reorthogonalization: scripts/peers/petsc_cg) on the same matrix, with 1 and
# 2 ranks, a fixed number of iterations each (default 90: three GMRES cycles).
# The matrix is written once by fsai-dist as PETSc binary and read by both.
# Time per iteration, and per SpMV: BiCGSTAB does 2 SpMVs (and 2 Jacobi
# applications) per iteration, GMRES 1, so per SpMV compares the methods with
# each other; the PETSc/fsai ratio is the same either way (above 1: fsai-dist
# is faster). The last line of each rank count times 100 SpMVs alone
# (-bench-spmv 100; the peer's spmv_s).
# Each run is repeated (default 3) and the fastest repeat counts, as the
# machine may be shared with other work.
# Usage: scripts/bench-nonsym.sh [problem] [iterations] [outdir] [repeats]
#   (default convdiff:64:100 90 $OUT or out/bench-nonsym, which git ignores, 3)
# Writes outdir/*.json and prints a table with the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --peers
. scripts/env.sh
problem=${1:-convdiff:64:100}
iters=${2:-90}
out=${3:-${OUT:-out/bench-nonsym}}
reps=${4:-3}
mkdir -p "$out"
go build -o bin/fsai-dist ./cmd/fsai-dist
scripts/peers/build.sh bin/peers >/dev/null

# the matrix, once: -write-matrix writes it before the solve (one iteration, exit 3)
matrix="$out/matrix.petsc"
bin/fsai-dist -problem "$problem" -solver gmres -prec none -maxit 1 -progress 0 \
  -write-matrix "$matrix" 2>/dev/null || [ $? -eq 3 ]

rm -f "$out"/fsai-*-np*-*.json "$out"/petsc-*-np*-*.json # earlier repeats
run() { # run REPEAT RANKS METHOD PEER-METHOD
  local rep=$1 np=$2 ours=$3 peer=$4
  # exactly $iters iterations: a tolerance that is never reached (exit 3 expected)
  mpirun -np "$np" --bind-to core bin/fsai-dist -matrix "$matrix" -solver "$ours" -gmres.restart 30 \
    -prec jacobi -backend cpu -threads 1 -tol 1e-30 -maxit "$iters" -bench-spmv 100 -progress 0 \
    -report "$out/fsai-$ours-np$np-$rep.json" 2>/dev/null || [ $? -eq 3 ]
  mpirun -np "$np" --bind-to core bin/peers/petsc_cg -matrix "$matrix" -method "$peer" -restart 30 \
    -fixed-iters "$iters" -json "$out/petsc-$peer-np$np-$rep.json" >/dev/null
}
for rep in $(seq "$reps"); do
  for np in 1 2; do
    run "$rep" $np bicgstab bcgs
    run "$rep" $np gmres gmres
  done
done

python3 - "$out" "$problem" <<'PY'
import glob, json, sys
out, problem = sys.argv[1], sys.argv[2]

def fastest(name, key):
    """The repeat of run name with the smallest key."""
    return min((json.load(open(p)) for p in glob.glob(f"{out}/{name}-*.json")), key=lambda r: r[key])

spmvs = {"bicgstab": 2, "gmres": 1}  # SpMVs per iteration
print(f"{problem}, Jacobi; ms per iteration and per SpMV; PETSc/fsai above 1: fsai-dist faster")
print(f"{'ranks':>5} {'method':>9} {'its':>4} {'fsai ms/it':>10} {'PETSc ms/it':>11} {'fsai ms/SpMV':>12} {'PETSc ms/SpMV':>13} {'PETSc/fsai':>10}")
for np in (1, 2):
    for ours, peer in (("bicgstab", "bcgs"), ("gmres", "gmres")):
        f = fastest(f"fsai-{ours}-np{np}", "iter_s")
        p = fastest(f"petsc-{peer}-np{np}", "time_per_iter_s")
        if f["iterations"] != p["iterations"]:
            sys.exit(f"bench-nonsym: {ours} np{np}: fsai-dist ran {f['iterations']} iterations, PETSc {p['iterations']}")
        fit, pit = f["iter_s"] * 1e3, p["time_per_iter_s"] * 1e3
        k = spmvs[ours]
        print(f"{np:>5} {ours:>9} {f['iterations']:>4} {fit:>10.3f} {pit:>11.3f} {fit/k:>12.3f} {pit/k:>13.3f} {pit/fit:>10.2f}")
    fs, ps = fastest(f"fsai-*-np{np}", "spmv_s")["spmv_s"], fastest(f"petsc-*-np{np}", "spmv_s")["spmv_s"]
    print(f"{np:>5} {'SpMV alone':>14} {'':>22} {fs*1e3:>12.3f} {ps*1e3:>13.3f} {ps/fs:>10.2f}")
PY
