#!/usr/bin/env bash
# session 6, lease 6 (nvidia-h200-x8): host CPU profiles of the set-up: poisson7:400 on 8 GPUs (reach 2), diffusion:200 on 2 GPUs
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run6.tgz" -C "$out" .' EXIT
timeout 120 mpirun -np 8 --bind-to none bin/fsai-dist -backend cuda -problem poisson7:400 -prec afsai -afsai.reach 2 -progress 0 -report $out/p400-np8.json -cpuprofile $out/p400-np8.prof > $out/p400-np8.log 2>&1
echo "p400 rc $?"
timeout 100 mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -afsai.reach 2 -progress 0 -report $out/d200-np2.json -cpuprofile $out/d200-np2.prof > $out/d200-np2.log 2>&1
echo "d200 rc $?"
ls $out
