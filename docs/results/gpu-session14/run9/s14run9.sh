#!/usr/bin/env bash
# session 14, lease 9 (nvidia-h200-x2): held rows numbered on all cores, no array of the
# stripe's length for the local system's own rows (HEAD) against 711b4e0, whole solves,
# poisson7:400 and diffusion:200 on two GPUs; diffusion:200 on one and two GPUs alternately,
# three runs each; the timing build on poisson7:400
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run9; mkdir -p $R
trap 'cd $OUT && tar czf run9.tgz run9' EXIT
cp bin/s14run9.sh $R/
bin/ab2.sh $R p400np2 2 -problem poisson7:400 -prec afsai | tee $R/ab-p400np2.txt
bin/ab2.sh $R d200np2 2 -problem diffusion:200 -prec afsai | tee $R/ab-d200np2.txt
P="-problem diffusion:200 -prec afsai"
for i in 1 2 3; do for np in 1 2; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend cuda $P -maxit 1 -progress 0 -report $R/alt-np$np-$i.json > $R/alt-np$np-$i.log 2>&1
done; done
python3 - $R <<'PY'
import json,sys,statistics as s
R=sys.argv[1]
t={1:[],2:[]}
for np in (1,2):
  for i in (1,2,3):
    t[np].append(json.load(open(f'{R}/alt-np{np}-{i}.json'))['prec_setup_s'])
print('np1', ' '.join('%.4f'%x for x in t[1]), 'np2', ' '.join('%.4f'%x for x in t[2]), 'medians %.4f %.4f ratio %.3f' % (s.median(t[1]), s.median(t[2]), s.median(t[2])/s.median(t[1])))
PY
FSAI_DBG=1 mpirun -np 2 --bind-to none bin/fsai-dbg -backend cuda -problem poisson7:400 -prec afsai -maxit 1 -progress 0 -report $R/p400np2-dbg.json > $R/p400np2-dbg.log 2>&1
true
