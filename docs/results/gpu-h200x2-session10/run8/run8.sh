#!/bin/bash
# session 10, run 8: the collection's stripe-long arrays untouched where
# the search does not reach (zero marks, held rows numbered by source): GPU tests; A/B against the code before (bin/fsai-dist-old), alternately,
# with each rank's peak resident memory.
cd "$(dirname "$0")/.."
. scripts/env.sh
R=$OUT/run8; mkdir -p $R
trap 'cd $OUT && tar czf run8.tgz run8' EXIT
(cd pcg && timeout 120 ../bin/pcg.test -test.run OnGPU -test.v > $R/pcg-test.log 2>&1; echo "rc $?" >> $R/pcg-test.log)
echo "pcg.test OnGPU: $(tail -1 $R/pcg-test.log), $(grep -c -- '--- PASS' $R/pcg-test.log) passed" | tee $R/summary.txt
for rep in 1 2 3; do
  for cfg in "d200-np2 2 diffusion:200" "p320-np2 2 poisson7:320" "d200-np1 1 diffusion:200"; do
    set -- $cfg
    for v in old new; do
      b=bin/fsai-dist; [ $v = old ] && b=bin/fsai-dist-old
      timeout 90 mpirun -np $2 --bind-to none python3 bin/maxrss.py $b -backend cuda -problem $3 -prec afsai -progress 0 -maxit 1 -report $R/$1-$v-$rep.json > $R/$1-$v-$rep.log 2>&1
    done
  done
done
python3 - $R <<'PY' | tee -a $R/summary.txt
import json, glob, re, sys
R = sys.argv[1]
for name in ("d200-np1", "d200-np2", "p320-np1", "p320-np2"):
    for v in ("old", "new"):
        out = []
        for p in sorted(glob.glob(f"{R}/{name}-{v}-*.json")):
            r = json.load(open(p)); i = r["prec_info"]
            rss = re.findall(r"MAXRSS_MB (\d+)", open(p[:-5] + ".log").read())
            out.append(f"prec {r['prec_setup_s']:.3f} (gather {i['gather_s']:.3f} compute {i['compute_s']:.3f} transpose {i['transpose_s']:.3f} upload {i['upload_s']:.3f}) rss {'/'.join(rss)} MB")
        print(name, v, " | ".join(out))
PY
