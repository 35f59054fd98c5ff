#!/usr/bin/env bash
# Quick end-to-end check on a GPU machine with carried binaries (bin/):
# the same problems on the CUDA and CPU backends, one and two ranks.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${OUT:-out/gpu-smoke}
mkdir -p "$out"
nvidia-smi -L
run() { name=$1; shift; echo "== $name: $*"; "$@" -progress 0 -report "$out/$name.json" 2>&1 | tail -3; echo "exit $?"; }
run cuda-p128-jacobi bin/fsai-dist -backend cuda -problem poisson7:128 -prec jacobi
run cpu-p128-jacobi bin/fsai-dist -backend cpu -problem poisson7:128 -prec jacobi
run cuda2-p128-jacobi mpirun -np 2 --bind-to none bin/fsai-dist -gpu.share -backend cuda -problem poisson7:128 -prec jacobi
run cuda-d64-afsai bin/fsai-dist -backend cuda -problem diffusion:64 -prec afsai
run cpu-d64-afsai bin/fsai-dist -backend cpu -problem diffusion:64 -prec afsai
run cuda-p256-spmv bin/fsai-dist -backend cuda -problem poisson7:256 -prec jacobi -bench-spmv 50
python3 - "$out" <<'PY'
import json, glob, os, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    r = json.load(open(f))
    print(f"{os.path.basename(f):24} {r['backend']:5} ranks={r['ranks']} its={r['iterations']} relres={r['relres']:.2e} setup={r['setup_s']:.3f} solve={r['solve_s']:.3f} iter_ms={1e3*r['iter_s']:.3f} spmv_gbs={r.get('spmv_gbs',0):.0f}")
PY
