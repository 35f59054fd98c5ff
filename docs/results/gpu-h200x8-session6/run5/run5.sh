#!/usr/bin/env bash
# session 6, lease 5 (nvidia-h200-x8): the final code's strong scaling on poisson7:400 (exact G, and -afsai.reach 2) and weak scaling at 1,771,561 rows per GPU
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run5.tgz" -C "$out" .' EXIT
nvidia-smi -L > $out/gpus.txt
timeout 200 bin/fsai-scale strong -warmup -ranks 1,2,4,8 -problem poisson7:400 -out $out/strong-poisson7400 -- -backend cuda -prec afsai > $out/strong-poisson7400.log 2>&1
cat $out/strong-poisson7400/scaling.csv | cut -d, -f1,7-12
timeout 150 bin/fsai-scale strong -warmup -ranks 2,4,8 -problem poisson7:400 -out $out/strong-poisson7400-reach2 -- -backend cuda -prec afsai -afsai.reach 2 > $out/strong-poisson7400-reach2.log 2>&1
cat $out/strong-poisson7400-reach2/scaling.csv | cut -d, -f1,7-12
timeout 120 bin/fsai-scale weak -warmup -ranks 1,2,4,8 -rows-per-rank 1771561 -family poisson7 -out $out/weak-1771561 -- -backend cuda -prec afsai > $out/weak-1771561.log 2>&1
cat $out/weak-1771561/scaling.csv | cut -d, -f1,7-12
