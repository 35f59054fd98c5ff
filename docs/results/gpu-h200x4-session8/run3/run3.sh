#!/usr/bin/env bash
# session 8, lease 3 (nvidia-h200-x4): A/B in one lease, alternating: bin/fsai-dist-old (344c259, session 7's last) against
# bin/fsai-dist (this session's); pcg GPU tests; strong scaling of poisson7:400 on 1, 2, 4 GPUs and weak scaling at 1,771,561 rows per GPU
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run3.tgz" -C "$out" .' EXIT
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -20
run() { bin=$1; name=$2; np=$3; shift 3; timeout 120 mpirun -np $np --bind-to none bin/$bin -backend cuda -prec afsai -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
for rep in 1 2; do
  for cfg in "p400-np4 4 poisson7:400" "p400-np2 2 poisson7:400" "d200-np2 2 diffusion:200" "d200-np1 1 diffusion:200"; do
    set -- $cfg
    run fsai-dist-old $1-old-$rep $2 -problem $3
    run fsai-dist $1-new-$rep $2 -problem $3
  done
done
timeout 240 bin/fsai-scale strong -warmup -ranks 1,2,4 -problem poisson7:400 -out $out/strong-poisson7400 -- -backend cuda -prec afsai > $out/strong-poisson7400.log 2>&1
cut -d, -f1,7-12 $out/strong-poisson7400/scaling.csv
timeout 150 bin/fsai-scale weak -warmup -ranks 1,2,4 -rows-per-rank 1771561 -family poisson7 -out $out/weak-1771561 -- -backend cuda -prec afsai > $out/weak-1771561.log 2>&1
cut -d, -f1,7-12 $out/weak-1771561/scaling.csv
for f in $out/*.json $out/strong-poisson7400/runs/*.json $out/weak-1771561/runs/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d['prec_info']
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), {k:round(v,3) for k,v in p.items() if k.endswith('_s')}, 'kernels', round(sum(p['setup_kernels'].values()),3))"; done
