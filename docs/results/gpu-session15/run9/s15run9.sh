#!/usr/bin/env bash
# session 15, run 9: static FSAI (-prec fsai) with -backend cuda, whose set-up runs on the host, against aFSAI's on the device (diffusion:200, one and two GPUs)
R=$OUT/run9; mkdir -p $R; trap 'cd $OUT && tar czf run9.tgz run9' EXIT
. scripts/env.sh
for np in 1 2; do for p in fsai afsai; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec $p -progress 0 -report $R/$p-np$np.json > $R/$p-np$np.log 2>&1
done; done
python3 - $R <<'PY'
import json,sys
R=sys.argv[1]
for np in (1,2):
  for p in ('fsai','afsai'):
    r=json.load(open(f'{R}/{p}-np{np}.json')); i=r['prec_info']
    print(f"{p} np{np}: its {r['iterations']} setup {r['setup_s']:.3f} prec {r['prec_setup_s']:.3f} gather {i.get('gather_s',0):.3f} compute {i.get('compute_s',0):.3f} solve {r['solve_s']:.3f} ms/it {1e3*r['iter_s']:.3f} density {r.get('prec_density',0):.2f} on {i.get('setup_device')}")
PY
