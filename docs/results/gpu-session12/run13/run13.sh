#!/usr/bin/env bash
# session 12, lease 13: the left row pointers of the early set-up made ready in the background (A/B against c958b31); GPU tests
R=$OUT/run13; mkdir -p $R; trap 'cd $OUT && tar czf run13.tgz run13' EXIT
. scripts/env.sh
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|StartRows|KernelsCompile|Transpose' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head -3
P="-problem diffusion:200 -prec afsai"
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda $P -progress 0 -report $R/solve2.json > $R/solve2.log 2>&1; echo "solve2 rc $?"
python3 -c "import json;r=json.load(open('$R/solve2.json'));p=r['prec_info'];print('solve2', r['iterations'], r['relres'], r['prec_setup_s'], r['solve_s'], 'early_rows', p.get('early_rows'))"
bin/ab.sh $R d200np2 2 $P
FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 > $R/dbg2.log 2>&1
grep 'DBG r1' $R/dbg2.log | sort -k3 -n | awk '/second part computed/{p=1} p' | head -12
