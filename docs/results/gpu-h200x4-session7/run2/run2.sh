#!/usr/bin/env bash
# session 7, lease 2 (nvidia-h200-x4): the exact set-up that collects what its rows need (reach 5 first):
# GPU tests of pcg; poisson7:400 on 4 GPUs against the full reach 21; weak scaling 1 and 4 GPUs; diffusion:200 on 1 and 2 GPUs
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run2.tgz" -C "$out" .' EXIT
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -20
run() { name=$1; np=$2; shift 2; timeout 120 mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -prec afsai -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
run p400-np4-warm 4 -problem poisson7:400
run p400-np4 4 -problem poisson7:400 -cpuprofile $out/p400-np4.prof
run p400-np4-reach21 4 -problem poisson7:400 -afsai.reach 21
run d200-np1 1 -problem diffusion:200
run d200-np2 2 -problem diffusion:200
run d200-np2-reach21 2 -problem diffusion:200 -afsai.reach 21
timeout 150 bin/fsai-scale weak -warmup -ranks 1,2,4 -rows-per-rank 1771561 -family poisson7 -out $out/weak-1771561 -- -backend cuda -prec afsai > $out/weak-1771561.log 2>&1
cat $out/weak-1771561/scaling.csv | cut -d, -f1,7-12
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d['prec_info']
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), 'reach', p.get('reach'), p.get('collections'), {k:round(v,3) for k,v in p.items() if k.endswith('_s')})"; done
