#!/usr/bin/env bash
# session 9, lease 2 (nvidia-h200-x4): e258240 (NewFor, SpMMDot): poisson7:400 on 4 GPUs against the session's start
# (8549c80), alternating, twice each; strong scaling of poisson7:400 and diffusion:320 and weak scaling at
# 1,771,561 rows per GPU on 1, 2, 4 GPUs; the library's benchmarks (8 right-hand sides, UpdateValues)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run2.tgz" -C "$out" .' EXIT
nvidia-smi -L > $out/gpus.txt
run() { bin=$1; name=$2; np=$3; shift 3; timeout 90 mpirun -np $np --bind-to none bin/$bin -backend cuda -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
for rep in 1 2; do
  run fsai-dist-old p400-np4-old-$rep 4 -problem poisson7:400 -prec afsai
  run fsai-dist p400-np4-new-$rep 4 -problem poisson7:400 -prec afsai
done
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d.get('prec_info') or {}
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3), {k:round(v,3) for k,v in p.items() if k.endswith('_s')}, 'kernels', round(sum((p.get('setup_kernels') or {}).values()),3))"; done
timeout 150 bin/fsai-scale strong -warmup -ranks 1,2,4 -problem poisson7:400 -out $out/strong-poisson7400 -- -backend cuda -prec afsai > $out/strong-poisson7400.log 2>&1
cut -d, -f1,7-12 $out/strong-poisson7400/scaling.csv
timeout 120 bin/fsai-scale weak -warmup -ranks 1,2,4 -rows-per-rank 1771561 -family poisson7 -out $out/weak-1771561 -- -backend cuda -prec afsai > $out/weak-1771561.log 2>&1
cut -d, -f1,7-12 $out/weak-1771561/scaling.csv
timeout 120 bin/fsai-scale strong -ranks 1,2,4 -problem diffusion:320 -out $out/strong-diffusion320 -- -backend cuda -prec afsai > $out/strong-diffusion320.log 2>&1
cut -d, -f1,7-12 $out/strong-diffusion320/scaling.csv
OUT=$out/library timeout 100 scripts/bench-library.sh cuda poisson7:200 poisson7:100 > $out/library.log 2>&1
grep -E "Benchmark|ratio" $out/library.log | head -20
