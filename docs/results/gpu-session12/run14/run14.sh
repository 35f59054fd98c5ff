#!/usr/bin/env bash
# session 12, lease 14: Accumulate without Scan's function (A/B against c2887dd), one and two GPUs
R=$OUT/run14; mkdir -p $R; trap 'cd $OUT && tar czf run14.tgz run14' EXIT
. scripts/env.sh
P="-problem diffusion:200 -prec afsai"
bin/ab.sh $R d200np1 1 $P
bin/ab.sh $R d200np2 2 $P
python3 - $R <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/*.json')):
  r=json.load(open(f)); p=r['prec_info']
  print(f.split('/')[-1], f"prec {r['prec_setup_s']:.4f} transpose {p['transpose_s']:.4f} upload {p['upload_s']:.4f}")
PY
