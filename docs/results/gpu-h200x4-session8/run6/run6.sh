#!/usr/bin/env bash
# session 8, lease 6 (nvidia-h200-x4): the set-up's batch state bounded at 16 GB and 8 GB against unbounded (half the free
# memory), alternating in one lease: diffusion:200 on 1 and 2 GPUs, poisson7:400 on 4 and 1
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run6.tgz" -C "$out" .' EXIT
run() { bin=$1; name=$2; np=$3; shift 3; timeout 120 mpirun -np $np --bind-to none bin/$bin -backend cuda -prec afsai -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
for rep in 1 2; do
  for cfg in "p400-np4 4 poisson7:400" "d200-np1 1 diffusion:200" "d200-np2 2 diffusion:200" "p400-np1 1 poisson7:400"; do
    set -- $cfg
    for v in base 16g 8g; do run fsai-dist-$v $1-$v-$rep $2 -problem $3; done
  done
done
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d['prec_info']; k=p['setup_kernels']
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), {k:round(v,3) for k,v in p.items() if k.endswith('_s')}, 'kernels', round(sum(k.values()),3))"; done
