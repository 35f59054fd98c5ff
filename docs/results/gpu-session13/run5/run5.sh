#!/usr/bin/env bash
# session 13, lease 5: 322465e and the second part's arrays allocated before the first's are freed; tests, A/B against 0ad321c, timing prints
R=$OUT/run5; mkdir -p $R; trap 'cd $OUT && tar czf run5.tgz run5' EXIT
. scripts/env.sh
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose|SpreadRows' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head -3
(cd pcg && ../bin/pcg.test -test.run OnGPU > $R/pcgtest.log 2>&1); echo "pcg tests rc $?"; tail -1 $R/pcgtest.log
P="-problem diffusion:200 -prec afsai"
bash bin/ab.sh $R d200np2 2 $P
bash bin/ab.sh $R d200np1 1 $P
for i in 1 2; do FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/dbg2-$i.json > $R/dbg2-$i.log 2>&1; done
for np in 1 2; do mpirun -np $np --bind-to none bin/fsai-dist -backend cuda $P -progress 0 -report $R/solve$np.json > $R/solve$np.log 2>&1; echo "solve$np rc $?"
python3 -c "import json;r=json.load(open('$R/solve$np.json'));p=r['prec_info'];print('solve$np', r['iterations'], r['relres'], 'prec', r['prec_setup_s'], 'solve', r['solve_s'], 'bind', r['bind_s'], 'early_rows', p.get('early_rows'))"; done
for i in 1 2; do echo "== dbg2-$i"; grep 'DBG r1' $R/dbg2-$i.log | grep -v 'step \|xr:\|NewVector' | sort -k3 -n | awk '/gather start/{p=1} p' | head -80; done
