#!/usr/bin/env bash
# ab2.sh R NAME NP ARGS...: ab.sh with setup_s, bind_s and prec_setup_s, the full solve
R=$1; name=$2; np=$3; shift 3
for i in 1 2; do for v in old new; do
  b=bin/fsai-dist; [ $v = old ] && b=bin/fsai-dist-old
  mpirun -np $np --bind-to none $b -backend cuda "$@" -progress 0 -report $R/$name-$v-$i.json > $R/$name-$v-$i.log 2>&1
done; done
python3 - $R $name <<'PY'
import json,sys
R,name=sys.argv[1:]
for v in ('old','new'):
  for i in (1,2):
    r=json.load(open(f'{R}/{name}-{v}-{i}.json')); p=r['prec_info']
    print(f"{name} {v} {i}: its {r['iterations']} setup {r['setup_s']:.4f} bind {r['bind_s']:.4f} prec {r['prec_setup_s']:.4f} gather {p['gather_s']:.4f} solve {r['solve_s']:.4f}")
PY
