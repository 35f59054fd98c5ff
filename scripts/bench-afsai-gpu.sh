#!/usr/bin/env bash
# GPU benchmark of aFSAI against Jacobi and CuPy on diffusion:N (default 200,
# 8M rows) in one run on the GPU machine: the aFSAI set-up on the GPU in
# single precision, G applied in double (stored exactly in float32: its
# values are float32 numbers), in float64 storage (-matrix.narrow=false: what
# mixed precision is measured against) and in mixed precision, one and two
# GPUs, and the CPU backend's set-up of the same G on all the cores; static
# FSAI (-prec fsai) on one and two GPUs and on the CPU backend alike. Build here first (no Go there):
#   go build -o bin/fsai-dist ./cmd/fsai-dist
# then run there: scripts/bench-afsai-gpu.sh [outdir] [N]
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${1:-${OUT:-out/bench-afsai-gpu}}
n=${2:-200}
mkdir -p "$out"
work=$(mktemp -d)
gpus=$(nvidia-smi -L | wc -l)

run() { name=$1; shift; "$@" -progress 0 -maxit 20000 -report "$out/$name.json" 2>&1 | tail -1; }
run jacobi bin/fsai-dist -backend cuda -problem diffusion:$n -prec jacobi -write-matrix "$work/d.petsc"
run afsai bin/fsai-dist -backend cuda -problem diffusion:$n -prec afsai
run afsai-wide bin/fsai-dist -backend cuda -problem diffusion:$n -prec afsai -matrix.narrow=false
run afsai-mixed bin/fsai-dist -backend cuda -problem diffusion:$n -prec afsai -afsai.apply single
run fsai bin/fsai-dist -backend cuda -problem diffusion:$n -prec fsai
for p in afsai fsai; do
  # the same G set up by the CPU backend on all the machine's cores (one iteration: the set-up is what counts)
  bin/fsai-dist -backend cpu -problem diffusion:$n -prec $p -progress 0 -maxit 1 -report "$out/$p-cpu-setup.json" 2>&1 | tail -1
  if [ "$gpus" -ge 2 ]; then
    run $p-np2 mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem diffusion:$n -prec $p
  fi
done
python3 scripts/peers/cupy_cg.py -matrix "$work/d.petsc" -maxit 20000 -json "$out/cupy.json" >/dev/null
rm -rf "$work"

python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
j, a, w, m, a2, c, f, f2 = (load(x) for x in ("jacobi", "afsai", "afsai-wide", "afsai-mixed", "afsai-np2", "cupy", "fsai", "fsai-np2"))
# setup_s = bind_s (A, b and x onto the GPU: every preconditioner pays it) + prec_setup_s
print(f"{'run':12} {'its':>6} {'setup s':>8} {'bind s':>7} {'prec s':>7} {'solve s':>8} {'ms/it':>7} {'density':>7} {'setup on':>8} {'G stored':>8}")
for name, r in (("jacobi", j), ("afsai", a), ("afsai-wide", w), ("afsai-mixed", m), ("afsai-np2", a2), ("fsai", f), ("fsai-np2", f2)):
    if r:
        info = r.get("prec_info") or {}
        print(f"{name:12} {r['iterations']:>6} {r['setup_s']:>8.3f} {r['bind_s']:>7.3f} {r['prec_setup_s']:>7.3f} {r['solve_s']:>8.3f} {1e3*r['iter_s']:>7.3f} {r.get('prec_density',0):>7.2f} {info.get('setup_device',''):>8} {info.get('apply_storage',''):>8}")
print(f"{'cupy':12} {c['iterations']:>6} {'':>8} {c['solve_s']:>8.3f} {1e3*c['time_per_iter_s']:>7.3f}")
s = {
  "afsai_total_over_jacobi_solve": (a["setup_s"] + a["solve_s"]) / j["solve_s"],
  "afsai_total_over_cupy": (a["setup_s"] + a["solve_s"]) / c["solve_s"],
  "afsai_setup_over_solve": a["setup_s"] / a["solve_s"],
  "mixed_speedup_per_iteration": w["iter_s"] / m["iter_s"],  # against G stored in float64
  "afsai_mixed_total_over_jacobi_solve": (m["setup_s"] + m["solve_s"]) / j["solve_s"],
  # the same with the preconditioner's own set-up (prec_setup_s), without
  # binding A, which the Jacobi solve it is compared with needs as well
  "afsai_prec_total_over_jacobi_solve": (a["prec_setup_s"] + a["solve_s"]) / j["solve_s"],
  "afsai_prec_total_over_cupy": (a["prec_setup_s"] + a["solve_s"]) / c["solve_s"],
  "afsai_prec_setup_over_solve": a["prec_setup_s"] / a["solve_s"],
}
# static FSAI's figures carry the prefix static_
for pre, one, two, cs in (("", a, a2, load("afsai-cpu-setup")), ("static_", f, f2, load("fsai-cpu-setup"))):
    if pre:
        s["static_total_over_jacobi_solve"] = (f["setup_s"] + f["solve_s"]) / j["solve_s"]
        s["static_prec_setup_over_solve"] = f["prec_setup_s"] / f["solve_s"]
    if cs:
        s[pre + "gpu_setup_speedup_over_cpu"] = cs["setup_s"] / one["setup_s"]
        s[pre + "gpu_prec_setup_speedup_over_cpu"] = cs["prec_setup_s"] / one["prec_setup_s"]
    if two:
        s[pre + "two_gpu_setup_ratio"] = two["setup_s"] / one["setup_s"]
        s[pre + "two_gpu_prec_setup_ratio"] = two["prec_setup_s"] / one["prec_setup_s"]
        s[pre + "two_gpu_compute_ratio"] = two["prec_info"]["compute_s"] / one["prec_info"]["compute_s"]
for k, v in s.items():
    print(f"{k}: {v:.3f}")
json.dump(s, open(os.path.join(out, "summary.json"), "w"), indent=2)
PY
