#!/usr/bin/env bash
# session 13, lease 3: no copy of the interior rows, no download of empty left row pointers; tests, A/B against 0ad321c, timing prints (peers on and off)
R=$OUT/run3; mkdir -p $R; trap 'cd $OUT && tar czf run3.tgz run3' EXIT
. scripts/env.sh
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head -3
(cd pcg && ../bin/pcg.test -test.run OnGPU > $R/pcgtest.log 2>&1); echo "pcg tests rc $?"; tail -1 $R/pcgtest.log
P="-problem diffusion:200 -prec afsai"
bash bin/ab.sh $R d200np2 2 $P
bash bin/ab.sh $R d200np1 1 $P
FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/dbg2.json > $R/dbg2.log 2>&1
FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -gpu.host-halos -maxit 1 -progress 0 -report $R/dbg2h.json > $R/dbg2h.log 2>&1
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda $P -progress 0 -report $R/solve2.json > $R/solve2.log 2>&1; echo "solve2 rc $?"
python3 -c "import json;r=json.load(open('$R/solve2.json'));p=r['prec_info'];print('solve2', r['iterations'], r['relres'], r['prec_setup_s'], r['solve_s'], 'early_rows', p.get('early_rows'))"
for f in dbg2 dbg2h; do echo "== $f"; grep 'DBG r1' $R/$f.log | grep -v step | sort -k3 -n | awk '/early rows done/{p=1} p' | head -70; done
