#!/usr/bin/env bash
# session 13, lease 4: and the spread written once; A/B against 0ad321c, timing prints with the state freed before or after G's transpose, and NewVector's parts
R=$OUT/run4; mkdir -p $R; trap 'cd $OUT && tar czf run4.tgz run4' EXIT
. scripts/env.sh
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|StartRows|SpreadRows' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head -3
P="-problem diffusion:200 -prec afsai"
bash bin/ab.sh $R d200np2 2 $P
for late in 0 1; do for np in 1 2; do
  e=""; [ $late = 1 ] && e="-x FSAI_FREE_LATE=1"
  FSAI_DBG=1 mpirun -np $np --bind-to none -x FSAI_DBG $e bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/dbg$np-late$late.json > $R/dbg$np-late$late.log 2>&1
done; done
python3 - $R <<'PY'
import json,sys
R=sys.argv[1]
for late in (0,1):
  for np in (1,2):
    r=json.load(open(f'{R}/dbg{np}-late{late}.json')); print(f"np{np} late{late}: prec {r['prec_setup_s']:.4f} compute {r['prec_info']['compute_s']:.4f}")
PY
for f in dbg1-late0 dbg1-late1; do echo "== $f"; grep 'DBG r0' $R/$f.log | grep -v step | sort -k3 -n | awk '/batch grown/{p=1} p' | head -40; done
for f in dbg2-late0 dbg2-late1; do echo "== $f r0"; grep 'DBG r0' $R/$f.log | grep -v step | sort -k3 -n | awk '/batch grown/{p=1} p' | head -14; echo "== $f r1";  grep 'DBG r1' $R/$f.log | grep -v step | sort -k3 -n | awk '/second part computed/{p=1} p' | head -70; done
