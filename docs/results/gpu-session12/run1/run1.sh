#!/usr/bin/env bash
R=$OUT/run1; mkdir -p $R; trap 'cd $OUT && tar czf run1.tgz run1' EXIT
source scripts/env.sh
nvidia-smi -L > $R/gpus.txt
P="-backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0"
for i in 1 2 3; do
  FSAI_DBG=1 bin/fsai-dbg $P -report $R/np1-$i.json > $R/np1-$i.log 2>&1
  FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg $P -report $R/np2-$i.json > $R/np2-$i.log 2>&1
done
bin/fsai-dist $P -report $R/tr1.json -trace $R/tr1.trace > $R/tr1.log 2>&1
mpirun -np 2 --bind-to none bin/fsai-dist $P -report $R/tr2.json -trace $R/tr2.trace > $R/tr2.log 2>&1
python3 - $R <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
  r=json.load(open(f)); p=r['prec_info']; k=p.get('setup_kernels',{})
  print(f.split('/')[-1], f"prec {r['prec_setup_s']:.4f} gather {p['gather_s']:.4f} compute {p['compute_s']:.4f} transpose {p['transpose_s']:.4f} upload {p['upload_s']:.4f} |", ' '.join(f"{a[:-2]} {1e3*b:.1f}" for a,b in k.items()))
PY
grep DBG $R/np1-3.log $R/np2-3.log
