#!/usr/bin/env bash
# session 8, lease 2 (nvidia-h200-x4): the local system joined on the device (3c37e74): gpu FSAI tests, pcg GPU tests;
# diffusion:200 on 1 and 2 GPUs, poisson7:400 on 1, 2, 4 (trace of 4); weak 1,771,561 rows per GPU on 1 and 4
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run2.tgz" -C "$out" .' EXIT
(cd gpu && timeout 240 ../bin/gpu.test -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile' -test.v > $out/gpu-test.log 2>&1; echo "rc $?" >> $out/gpu-test.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/gpu-test.log | grep -v "^    " | head -30
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -20
run() { name=$1; np=$2; shift 2; timeout 120 mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -prec afsai -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
run d200-np1-warm 1 -problem diffusion:200
run d200-np1 1 -problem diffusion:200
run d200-np2 2 -problem diffusion:200
run d200-np2-b 2 -problem diffusion:200
run p400-np4 4 -problem poisson7:400 -trace $out/p400-np4.trace -cpuprofile $out/p400-np4.prof
run p400-np2 2 -problem poisson7:400
run p400-np1 1 -problem poisson7:400
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d['prec_info']
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), 'reach', p.get('reach'), p.get('collections'), {k:round(v,3) for k,v in p.items() if k.endswith('_s')}, {k:round(v,3) for k,v in p['setup_kernels'].items()})"; done
rm -f $out/*.trace.rank0 $out/*.trace.rank3
