#!/usr/bin/env bash
# abs.sh R NAME NP ARGS...: the solve with the old and the new binary, alternately, two runs each
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
    r=json.load(open(f'{R}/{name}-{v}-{i}.json'))
    k=(r.get('prec_info') or {}).get('setup_kernels') or {}
    extra=' '.join(f"{x[:-2]} {1e3*k[x]:.1f}" for x in ('gradient_s','gather_s','cholesky_s','solve_s') if x in k)
    print(f"{name} {v} {i}: its {r['iterations']} relres {r['relres']:.3e} setup {r['setup_s']:.4f} prec {r['prec_setup_s']:.4f} solve {r['solve_s']:.4f} ms/it {1e3*r['iter_s']:.4f} {extra}")
PY
