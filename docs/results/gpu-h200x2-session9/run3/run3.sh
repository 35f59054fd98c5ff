#!/usr/bin/env bash
# session 9, lease 3 (nvidia-h200-x2): 5ac3a00: pcg.test OnGPU (FSAI through afsai.NewFor, 1 to 3 ranks);
# diffusion:200 on 1 and 2 GPUs with -trace and -cpuprofile (for the set-up's host time), and once without
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run3.tgz" -C "$out" .' EXIT
(cd pcg && timeout 150 ../bin/pcg.test -test.run OnGPU -test.v > $out/pcg-test.log 2>&1; echo "rc $?" >> $out/pcg-test.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test.log | head -20
run() { name=$1; np=$2; shift 2; timeout 60 mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
run d200-np1 1 -problem diffusion:200 -prec afsai
run d200-np1-trace 1 -problem diffusion:200 -prec afsai -trace $out/d200-np1.trace -cpuprofile $out/d200-np1.prof
run d200-np2-trace 2 -problem diffusion:200 -prec afsai -trace $out/d200-np2.trace -cpuprofile $out/d200-np2.prof
run d200-np2 2 -problem diffusion:200 -prec afsai
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d.get('prec_info') or {}
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), {k:round(v,3) for k,v in p.items() if k.endswith('_s')})"; done
ls -la $out
