#!/usr/bin/env bash
# ab.sh R NAME NP ARGS...: runs the old and the new binary alternately on NP ranks, two runs each,
# -maxit 1, and prints prec_setup_s and the set-up's kernel stages
R=$1; name=$2; np=$3; shift 3
for i in 1 2; do for v in old new; do
  b=bin/fsai-dist; [ $v = old ] && b=bin/fsai-dist-old
  mpirun -np $np --bind-to none $b -backend cuda "$@" -maxit 1 -progress 0 -report $R/$name-$v-$i.json > $R/$name-$v-$i.log 2>&1
done; done
python3 - $R $name <<'PY'
import json,sys
R,name=sys.argv[1:]
for v in ('old','new'):
  for i in (1,2):
    r=json.load(open(f'{R}/{name}-{v}-{i}.json')); p=r['prec_info']; k=p.get('setup_kernels',{})
    print(f"{name} {v} {i}: prec {r['prec_setup_s']:.4f} compute {p['compute_s']:.4f} gather {p['gather_s']:.4f} | "+' '.join(f"{a[:-2]} {1e3*b:.1f}" for a,b in k.items()))
PY
