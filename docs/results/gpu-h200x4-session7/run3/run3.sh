#!/usr/bin/env bash
# session 7, lease 3 (nvidia-h200-x4): execution traces and CPU profiles of the set-up: poisson7:400 on 4 GPUs, diffusion:200 on 1 and 2
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run3.tgz" -C "$out" .' EXIT
run() { name=$1; np=$2; shift 2; timeout 120 mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -prec afsai -progress 0 -report $out/$name.json -trace $out/$name.trace -cpuprofile $out/$name.prof "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
run p400-np4 4 -problem poisson7:400
run d200-np1 1 -problem diffusion:200
run d200-np2 2 -problem diffusion:200
ls -la $out | head -30
