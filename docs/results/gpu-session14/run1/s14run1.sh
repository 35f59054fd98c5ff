#!/usr/bin/env bash
# session 14, lease 1 (nvidia-h200-x4): poisson7:400 on four GPUs, session 10's final code (3ac3aaa)
# against this session's start (f702a8e) alternately, twice each; one run of the timing build
# (per-rank stage marks); strong scaling of poisson7:400 and diffusion:320 and weak scaling at
# 1,771,561 rows per GPU on 1, 2, 4 GPUs with the current code
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run1; mkdir -p $R
trap 'cd $OUT && tar czf run1.tgz run1' EXIT
nvidia-smi -L > $R/gpus.txt; nvidia-smi topo -m >> $R/gpus.txt
cp bin/s14run1.sh $R/
run() { bin=$1; name=$2; np=$3; shift 3; timeout 90 mpirun -np $np --bind-to none bin/$bin -backend cuda -progress 0 -report $R/$name.json "$@" > $R/$name.log 2>&1; echo "$name rc $?"; }
for rep in 1 2; do
  run fsai-dist-old p400-np4-old-$rep 4 -problem poisson7:400 -prec afsai
  run fsai-dist p400-np4-new-$rep 4 -problem poisson7:400 -prec afsai
done
for f in $R/p400*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d.get('prec_info') or {}
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'prec', round(d.get('prec_setup_s',0),3), 'solve', round(d['solve_s'],3), {k:round(v,3) for k,v in p.items() if k.endswith('_s')})"; done | tee $R/summary.txt
FSAI_DBG=1 run fsai-dbg p400-np4-dbg 4 -problem poisson7:400 -prec afsai -maxit 1
FSAI_DBG=1 run fsai-dbg d320-np4-dbg 4 -problem diffusion:320 -prec afsai -maxit 1
timeout 170 bin/fsai-scale strong -warmup -ranks 1,2,4 -problem poisson7:400 -out $R/strong-poisson7400 -- -backend cuda -prec afsai > $R/strong-poisson7400.log 2>&1
cut -d, -f1,7-12 $R/strong-poisson7400/scaling.csv | tee -a $R/summary.txt
timeout 100 bin/fsai-scale weak -warmup -ranks 1,2,4 -rows-per-rank 1771561 -family poisson7 -out $R/weak-1771561 -- -backend cuda -prec afsai > $R/weak-1771561.log 2>&1
cut -d, -f1,7-12 $R/weak-1771561/scaling.csv | tee -a $R/summary.txt
timeout 170 bin/fsai-scale strong -warmup -ranks 1,2,4 -problem diffusion:320 -out $R/strong-diffusion320 -- -backend cuda -prec afsai > $R/strong-diffusion320.log 2>&1
cut -d, -f1,7-12 $R/strong-diffusion320/scaling.csv | tee -a $R/summary.txt
