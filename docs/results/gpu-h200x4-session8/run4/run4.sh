#!/usr/bin/env bash
# session 8, lease 4 (nvidia-h200-x4): the session's last code: gpu FSAI tests and pcg GPU tests; diffusion:200 on 1 and 2 GPUs
# (aFSAI twice each, Jacobi on 1); strong scaling of poisson7:400 on 1, 2, 4 GPUs; weak scaling at 1,771,561 rows per GPU
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run4.tgz" -C "$out" .' EXIT
nvidia-smi -L > $out/gpus.txt
(cd gpu && timeout 240 ../bin/gpu.test -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile' -test.v > $out/gpu-test.log 2>&1; echo "rc $?" >> $out/gpu-test.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/gpu-test.log | head -30
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -20
run() { name=$1; np=$2; shift 2; timeout 120 mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
run d200-np1-warm 1 -problem diffusion:200 -prec afsai
run d200-np1 1 -problem diffusion:200 -prec afsai
run d200-np1-jacobi 1 -problem diffusion:200 -prec jacobi
run d200-np2 2 -problem diffusion:200 -prec afsai
run d200-np1-b 1 -problem diffusion:200 -prec afsai
run d200-np2-b 2 -problem diffusion:200 -prec afsai
timeout 240 bin/fsai-scale strong -warmup -ranks 1,2,4 -problem poisson7:400 -out $out/strong-poisson7400 -- -backend cuda -prec afsai > $out/strong-poisson7400.log 2>&1
cut -d, -f1,7-12 $out/strong-poisson7400/scaling.csv
timeout 150 bin/fsai-scale weak -warmup -ranks 1,2,4 -rows-per-rank 1771561 -family poisson7 -out $out/weak-1771561 -- -backend cuda -prec afsai > $out/weak-1771561.log 2>&1
cut -d, -f1,7-12 $out/weak-1771561/scaling.csv
for f in $out/*.json $out/strong-poisson7400/runs/*.json $out/weak-1771561/runs/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d.get('prec_info') or {}
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), {k:round(v,3) for k,v in p.items() if k.endswith('_s')}, 'kernels', round(sum((p.get('setup_kernels') or {}).values()),3))"; done
