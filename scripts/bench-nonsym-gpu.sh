#!/usr/bin/env bash
# GPU benchmark of the nonsymmetric methods on one card: fsai-dist's BiCGSTAB
# and GMRES(30) with Jacobi (-backend cuda) against CuPy's gmres (restart 30,
# Jacobi, right preconditioned: scripts/peers/cupy_cg.py -method gmres) on the
# same matrix (default convdiff:200, 8M rows; fsai-dist writes it as PETSc
# binary for CuPy), a fixed number of iterations each (default 300: ten GMRES
# cycles; a tolerance of 1e-30 that is never met), in one run. Prints time per
# iteration and per SpMV with the ratios to CuPy's, and BiCGSTAB's bandwidth
# over the card's device-to-device copy bandwidth measured in the same run.
#
# Per SpMV: BiCGSTAB does 2 SpMVs per iteration, GMRES 1 (both GMRES codes also
# compute the true residual at each restart, one SpMV more per 30 steps; not
# counted).
#
# The bytes one BiCGSTAB iteration with Jacobi moves (package bicgstab's doc):
# two SpMVs (the bytes fsai-dist's -bench-spmv counts for its storage of A:
# values, column indices, row pointers, the input vector read and the output
# written once) and 23 passes over a vector of n float64 (8n bytes each), one
# per vector a fused update reads or writes:
#   p = r + beta (p - omega v), ph = D^-1 p   read r, p, v, D^-1; write p, ph  6
#   v = A ph                                  (SpMV)
#   (r0^, v), (v, v)                          read r0^, v                      2
#   s = r - alpha v, sh = D^-1 s, (s, s)      read r, v, D^-1; write s, sh     5
#   t = A sh                                  (SpMV)
#   (t, s), (t, t)                            read t, s                        2
#   x += alpha ph + omega sh,
#   r = s - omega t, (r, r), (r0^, r)         read x, ph, sh, s, t, r0^;       8
#                                             write x, r
# bandwidth = (2 SpMV bytes + 23 * 8n) / time per iteration.
#
# Build here first (the GPU machine has no Go), then carry bin/:
#   go build -o bin/fsai-dist ./cmd/fsai-dist && go test -c -o bin/gpu.test ./gpu
# then run there: scripts/bench-nonsym-gpu.sh [problem] [iterations] [outdir]
#   (default convdiff:200 300 $OUT or out/bench-nonsym-gpu)
# Writes outdir/*.json, copy.txt and summary.json, and prints the table.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
problem=${1:-convdiff:200}
iters=${2:-300}
out=${3:-${OUT:-out/bench-nonsym-gpu}}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvidia-smi -L

# the card's device-to-device copy bandwidth, measured in this run
(cd gpu && ../bin/gpu.test -test.run '^$' -test.bench 'Bandwidth/copy' -test.benchtime 50x) | tee "$out/copy.txt"

# exactly $iters iterations each (exit status 3: not converged, expected)
fsai() {
  name=$1
  shift
  bin/fsai-dist -backend cuda -problem "$problem" -prec jacobi -tol 1e-30 -maxit "$iters" -bench-spmv 100 \
    -progress 0 -report "$out/$name.json" "$@" 2>&1 | tail -1
}
fsai fsai-bicgstab -solver bicgstab -write-matrix "$work/a.petsc"
fsai fsai-gmres -solver gmres -gmres.restart 30
# CuPy's maxiter counts Arnoldi steps in whole cycles: $iters steps if a multiple of 30
python3 scripts/peers/cupy_cg.py -matrix "$work/a.petsc" -method gmres -restart 30 -tol 1e-30 \
  -maxit "$iters" -json "$out/cupy-gmres.json" >/dev/null

python3 - "$out" "$problem" "$iters" <<'PY'
import json, os, re, sys
out, problem, iters = sys.argv[1], sys.argv[2], int(sys.argv[3])
vector_passes = 23  # BiCGSTAB: vector reads and writes per iteration (the script's header)
spmvs = {"bicgstab": 2, "gmres": 1}  # SpMVs per iteration


def load(name):
    p = os.path.join(out, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None


copy = float(re.search(r"([\d.]+) GB/s", open(os.path.join(out, "copy.txt")).read()).group(1))
cupy = load("cupy-gmres")
if cupy is None:
    sys.exit("bench-nonsym-gpu: no CuPy result")
cupy_it = cupy["time_per_iter_s"]
if cupy["iterations"] != iters:
    print(f"cupy gmres: ran {cupy['iterations']} iterations, not {iters}")
print(f"{problem}, Jacobi, {iters} iterations; device-to-device copy {copy:.0f} GB/s; ratio: ours over CuPy gmres(30)")
print(f"{'method':10} {'values':7} {'its':>4} {'ms/it':>7} {'ms/SpMV':>8} {'x CuPy /it':>10} {'x CuPy /SpMV':>12}")
print(f"{'cupy gmres':10} {'double':7} {cupy['iterations']:>4} {1e3*cupy_it:>7.3f} {1e3*cupy_it:>8.3f} {1:>10.2f} {1:>12.2f}")
summary = {"problem": problem, "copy_gbs": copy, "cupy": cupy, "rows": []}
for method in ("bicgstab", "gmres"):
    r = load("fsai-" + method)
    if r is None:
        print(f"{method}: no result")
        continue
    if r["iterations"] != iters:
        print(f"{method}: ran {r['iterations']} iterations, not {iters}: {r['reason']}: {r.get('detail', '')}")
    k = spmvs[method]
    row = dict(method=method, matrix_values=r.get("matrix_values", "double"), iterations=r["iterations"],
               iter_ms=1e3 * r["iter_s"], spmv_ms=1e3 * r["iter_s"] / k, iter_ratio=r["iter_s"] / cupy_it,
               spmv_ratio=(r["iter_s"] / k) / cupy_it, spmv_gbs=r["spmv_gbs"])
    if method == "bicgstab":
        spmv_bytes = r["spmv_gbs"] * 1e9 * r["spmv_s"]
        row["bytes_per_iter"] = 2 * spmv_bytes + vector_passes * 8 * r["n"]
        row["gbs"] = row["bytes_per_iter"] / r["iter_s"] / 1e9
        row["of_copy"] = row["gbs"] / copy
    summary["rows"].append(row)
    print(f"{method:10} {row['matrix_values']:7} {row['iterations']:>4} {row['iter_ms']:>7.3f} {row['spmv_ms']:>8.3f} {row['iter_ratio']:>10.2f} {row['spmv_ratio']:>12.2f}")
for row in summary["rows"]:
    if "of_copy" in row:
        print(f"bicgstab: {row['bytes_per_iter']/1e9:.3f} GB per iteration (2 SpMV + {vector_passes} vector passes), "
              f"{row['gbs']:.0f} GB/s, {row['of_copy']:.2f} of the copy bandwidth; SpMV alone {row['spmv_gbs']:.0f} GB/s")
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
PY
