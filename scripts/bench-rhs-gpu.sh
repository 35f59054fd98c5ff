#!/usr/bin/env bash
# Several right-hand sides on one GPU, measured inside PCG (the CLI's
# solve_s, no host transfers): -nrhs 8 against -nrhs 1 on poisson7:200 with
# Jacobi and aFSAI, and the block kernels at 8 columns against one
# (gpu.test BenchmarkBlockOps, BenchmarkSpMM). Build here: go build -o
# bin/fsai-dist ./cmd/fsai-dist && go test -c -o bin/gpu.test ./gpu
# then: scripts/bench-rhs-gpu.sh [outdir]   (default $OUT or out/bench-rhs)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=${1:-${OUT:-out/bench-rhs}}
mkdir -p "$out"
(cd gpu && ../bin/gpu.test -test.run '^$' -test.bench 'BlockOps|SpMM/7pt' -test.benchtime 20x) > "$out/kernels.txt" 2>&1
grep -E "k=(1|8) " "$out/kernels.txt"
for prec in jacobi afsai; do
  for k in 1 8; do
    bin/fsai-dist -backend cuda -progress 0 -problem poisson7:200 -prec $prec -nrhs $k -report "$out/$prec-k$k.json" 2>&1 | tail -1
  done
done
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
for prec in ("jacobi", "afsai"):
    one, many = (json.load(open(os.path.join(out, f"{prec}-k{k}.json"))) for k in (1, 8))
    per1 = one["solve_s"] / one["iterations"]
    per8 = many["solve_s"] / many["iterations"]
    print(f"{prec}: 1 rhs {1e3*per1:.3f} ms/it ({one['iterations']} its), 8 together {1e3*per8:.3f} ms/it ({many['iterations']} its): "
          f"one block iteration = {per8/per1:.2f} single iterations, ratio to 8 solves {per8/(8*per1):.2f}")
PY
