#!/usr/bin/env bash
# session 8, lease 9 (nvidia-h200-x4): lists of active rows only once at most half the rows are active: gpu FSAI tests;
# A/B against the code before, alternating: diffusion:200 (1 and 2 GPUs) and poisson7:400 (1 GPU)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run9.tgz" -C "$out" .' EXIT
(cd gpu && timeout 240 ../bin/gpu.test -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile' -test.v > $out/gpu-test.log 2>&1; echo "rc $?" >> $out/gpu-test.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/gpu-test.log | head -30
run() { bin=$1; name=$2; np=$3; shift 3; timeout 120 mpirun -np $np --bind-to none bin/$bin -backend cuda -prec afsai -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
for rep in 1 2; do
  for cfg in "d200-np1 1 diffusion:200" "d200-np2 2 diffusion:200" "p400-np1 1 poisson7:400"; do
    set -- $cfg
    run fsai-dist-base $1-base-$rep $2 -problem $3
    run fsai-dist $1-new-$rep $2 -problem $3
  done
done
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d['prec_info']; k=p['setup_kernels']
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), 'nnz', p['nnz'], 'compute', round(p['compute_s'],3), {a:round(v,3) for a,v in k.items()})"; done
