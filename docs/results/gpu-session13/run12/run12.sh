#!/usr/bin/env bash
# session 13, lease 12: the scratch freed synchronously when the ranks agree (new) against on another goroutine (old, 1ce... main), alternately, three runs each
R=$OUT/run12; mkdir -p $R; trap 'cd $OUT && tar czf run12.tgz run12' EXIT
. scripts/env.sh
P="-problem diffusion:200 -prec afsai"
for i in 1 2 3; do for np in 1 2; do for v in old new; do
  b=bin/fsai-dist; [ $v = old ] && b=bin/fsai-dist-old
  mpirun -np $np --bind-to none $b -backend cuda $P -maxit 1 -progress 0 -report $R/$v-np$np-$i.json > $R/$v-np$np-$i.log 2>&1
done; done; done
python3 - $R <<'PY'
import json,sys,statistics as s
R=sys.argv[1]
for v in ('old','new'):
  t={1:[],2:[]}
  for np in (1,2):
    for i in (1,2,3):
      r=json.load(open(f'{R}/{v}-np{np}-{i}.json')); t[np].append(r['prec_setup_s'])
  print(v, 'np1', ' '.join('%.4f'%x for x in t[1]), 'np2', ' '.join('%.4f'%x for x in t[2]), 'medians %.4f %.4f ratio %.3f' % (s.median(t[1]), s.median(t[2]), s.median(t[2])/s.median(t[1])))
PY
