#!/usr/bin/env bash
# session 14, lease 7 (nvidia-h200-x2): scripts/bench-afsai-gpu.sh on the session's code, then one
# and two GPUs alternately, three runs each (diffusion:200, -maxit 1)
R=$OUT/run7; mkdir -p $R; trap 'cd $OUT && tar czf run7.tgz run7' EXIT
cp bin/s14run7.sh $R/
nvidia-smi -L > $R/gpus.txt
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; echo "bench rc $?"
tail -22 $R/bench.log
. scripts/env.sh
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
