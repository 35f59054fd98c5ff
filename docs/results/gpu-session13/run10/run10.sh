#!/usr/bin/env bash
# session 13, lease 10: main (4619452) on one and two GPUs alternately, three runs each (the two-GPU set-up ratio)
R=$OUT/run10; mkdir -p $R; trap 'cd $OUT && tar czf run10.tgz run10' EXIT
. scripts/env.sh
P="-problem diffusion:200 -prec afsai"
for i in 1 2 3; do for np in 1 2; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend cuda $P -maxit 1 -progress 0 -report $R/np$np-$i.json > $R/np$np-$i.log 2>&1
done; done
python3 - $R <<'PY'
import json,sys
R=sys.argv[1]
t={1:[],2:[]}
for np in (1,2):
  for i in (1,2,3):
    r=json.load(open(f'{R}/np{np}-{i}.json')); p=r['prec_info']; t[np].append(r['prec_setup_s'])
    print(f"np{np} {i}: prec {r['prec_setup_s']:.4f} setup {r['setup_s']:.4f} compute {p['compute_s']:.4f} gather {p['gather_s']:.4f} transpose {p['transpose_s']:.4f} upload {p['upload_s']:.4f}")
import statistics as s
print("median np1 %.4f np2 %.4f ratio %.3f" % (s.median(t[1]), s.median(t[2]), s.median(t[2])/s.median(t[1])))
PY
