#!/usr/bin/env bash
# session 9, lease 1 (nvidia-h200-x2): afsai.NewFor (the set-up reads the bound A's diagonal block) and SpMMDot
# (block p'Ap in the product): GPU tests; A/B against the session's start (8549c80), alternating:
# diffusion:200 aFSAI on 1 and 2 GPUs, Jacobi on 1; poisson7:200 with 1 and 8 right-hand sides (Jacobi, aFSAI)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run1.tgz" -C "$out" .' EXIT
(cd gpu && timeout 200 ../bin/gpu.test -test.run 'AdaptiveFactor|AdaptiveSetup|KernelsCompile|SpMM|SpMVDot|BlockVectorOps|BlockErrors' -test.v > $out/gpu-test.log 2>&1; echo "rc $?" >> $out/gpu-test.log)
grep -E '^(--- FAIL|ok|FAIL|PASS|rc )' $out/gpu-test.log | head -30
grep -c -- '--- PASS' $out/gpu-test.log
(cd pcg && timeout 100 ../bin/pcg.test -test.run OnGPU -test.v > $out/pcg-test.log 2>&1; echo "rc $?" >> $out/pcg-test.log)
grep -E '^(--- FAIL|ok|FAIL|PASS|rc )' $out/pcg-test.log | head
run() { bin=$1; name=$2; np=$3; shift 3; timeout 60 mpirun -np $np --bind-to none bin/$bin -backend cuda -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
for rep in 1 2; do
  for cfg in "d200-np1 1 diffusion:200 afsai 1" "d200-np2 2 diffusion:200 afsai 1" "p200-afsai-k8 1 poisson7:200 afsai 8" "p200-jacobi-k8 1 poisson7:200 jacobi 8" "p200-afsai-k1 1 poisson7:200 afsai 1" "p200-jacobi-k1 1 poisson7:200 jacobi 1"; do
    set -- $cfg
    run fsai-dist-old $1-old-$rep $2 -problem $3 -prec $4 -nrhs $5
    run fsai-dist $1-new-$rep $2 -problem $3 -prec $4 -nrhs $5
  done
done
run fsai-dist d200-jacobi-np1-new-1 1 -problem diffusion:200 -prec jacobi
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d.get('prec_info') or {}; k=p.get('setup_kernels') or {}
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), 'ms/it', round(1e3*d['solve_s']/d['iterations'],3), 'compute', round(p.get('compute_s',0),3), {a:round(v,3) for a,v in k.items()})"; done
