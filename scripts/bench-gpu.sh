#!/usr/bin/env bash
# GPU benchmark of the CUDA backend against the card's own copy bandwidth and
# against CuPy (cuSPARSE SpMV, CuPy's CG with Jacobi), in one run on the GPU
# machine: SpMV bandwidth on poisson7:256 and diffusion:200, PCG-Jacobi time
# per iteration on poisson7:200 and poisson7:256, and, with two GPUs, the
# strong scaling of poisson7:256 and the share of the halo exchange hidden.
#
# Build here first (the GPU machine has no Go):
#   go build -o bin/fsai-dist ./cmd/fsai-dist && go test -c -o bin/gpu.test ./gpu
# then run there: scripts/bench-gpu.sh [outdir]   (default $OUT or out/bench-gpu)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${1:-${OUT:-out/bench-gpu}}
mkdir -p "$out"
work=$(mktemp -d)
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi -L

# the card's device-to-device copy bandwidth, measured in this run
(cd gpu && ../bin/gpu.test -test.run '^$' -test.bench 'Bandwidth/copy' -test.benchtime 50x) | tee "$out/copy.txt"

fsai() { name=$1; shift; bin/fsai-dist -backend cuda -progress 0 -report "$out/$name.json" "$@" 2>&1 | tail -2; }
# poisson7's values are integers: by default A is stored in float32 (exact);
# the -wide runs keep float64, as a matrix of general values would be
for p in 200 256; do
  fsai p$p-jacobi -problem poisson7:$p -prec jacobi -bench-spmv 100
  fsai p$p-jacobi-wide -problem poisson7:$p -prec jacobi -bench-spmv 100 -matrix.narrow=false
done
fsai d200-jacobi -problem diffusion:200 -prec jacobi -bench-spmv 100 -maxit 20000 -write-matrix "$work/d200.petsc"
if [ "$gpus" -ge 2 ]; then
  for v in "" -wide; do
    mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -progress 0 -problem poisson7:256 -prec jacobi \
      -bench-spmv 100 -matrix.narrow=$([ -z "$v" ] && echo true || echo false) -report "$out/p256-jacobi$v-np2.json" 2>&1 | tail -2
  done
fi

cupy() { name=$1; shift; python3 scripts/peers/cupy_cg.py "$@" -json "$out/$name.json" >/dev/null; }
cupy cupy-p200 -problem poisson7:200
cupy cupy-p256 -problem poisson7:256
cupy cupy-d200 -matrix "$work/d200.petsc" -maxit 20000
rm -rf "$work"

python3 - "$out" <<'PY'
import json, os, re, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
copy = float(re.search(r"([\d.]+) GB/s", open(os.path.join(out, "copy.txt")).read()).group(1))
rows = []
print(f"device-to-device copy: {copy:.0f} GB/s")
print("SpMV: GB/s of the bytes the storage moves; x cuSPARSE: cuSPARSE's time over ours (CuPy, float64 CSR)")
print(f"{'problem':14} {'A values':8} {'its':>5} {'cupy its':>8} {'SpMV GB/s':>9} {'of copy':>7} {'x cuSPARSE':>10} {'ms/it':>7} {'cupy ms/it':>10} {'ratio':>6}")
for prob, f, c in [("poisson7:200", "p200-jacobi", "cupy-p200"), ("poisson7:200", "p200-jacobi-wide", "cupy-p200"),
                   ("poisson7:256", "p256-jacobi", "cupy-p256"), ("poisson7:256", "p256-jacobi-wide", "cupy-p256"),
                   ("diffusion:200", "d200-jacobi", "cupy-d200")]:
    r, p = load(f), load(c)
    if not r or not p:
        continue
    row = dict(problem=prob, run=f, matrix_values=r.get("matrix_values", "double"), iterations=r["iterations"],
               cupy_iterations=p["iterations"], spmv_gbs=r["spmv_gbs"], spmv_of_copy=r["spmv_gbs"] / copy,
               spmv_vs_cusparse=p["spmv_s"] / r["spmv_s"], iter_ms=1e3 * r["iter_s"],
               cupy_iter_ms=1e3 * p["time_per_iter_s"], iter_ratio=r["iter_s"] / p["time_per_iter_s"])
    rows.append(row)
    print(f"{prob:14} {row['matrix_values']:8} {row['iterations']:>5} {row['cupy_iterations']:>8} {row['spmv_gbs']:>9.0f} {row['spmv_of_copy']:>7.2f} {row['spmv_vs_cusparse']:>10.2f} {row['iter_ms']:>7.3f} {row['cupy_iter_ms']:>10.3f} {row['iter_ratio']:>6.2f}")
summary = {"copy_gbs": copy, "rows": rows}
for v in ["", "-wide"]:
    two, one = load(f"p256-jacobi{v}-np2"), load(f"p256-jacobi{v}")
    if two and one:
        s = dict(matrix_values=one.get("matrix_values", "double"), iter_ms_1=1e3 * one["iter_s"], iter_ms_2=1e3 * two["iter_s"],
                 ratio=two["iter_s"] / one["iter_s"], its_1=one["iterations"], its_2=two["iterations"], halo_hidden=two.get("halo_hidden"),
                 spmv_ms_2=1e3 * two["spmv_s"], spmv_sequential_ms=1e3 * two.get("spmv_sequential_s", 0),
                 spmv_local_ms=1e3 * two.get("spmv_local_s", 0))
        summary["two_gpus" + v.replace("-", "_")] = s
        print(f"two GPUs, poisson7:256{v}:", json.dumps(s))
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
PY
