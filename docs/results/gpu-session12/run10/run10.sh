#!/usr/bin/env bash
# session 12, lease 10: + no lists without left blocks, one partition pass, the second part planned from the border rows. GPU tests; solves; A/B against main d664fcd; dbg marks
R=$OUT/run10; mkdir -p $R; trap 'cd $OUT && tar czf run10.tgz run10' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)|fsai_rows_test' $R/gputest.log | head
(cd pcg && ../bin/pcg.test -test.run OnGPU > $R/pcgtest.log 2>&1); echo "pcg tests rc $?"
SH=""; [ $(nvidia-smi -L | wc -l) -lt 2 ] && SH=-gpu.share
P="-problem diffusion:200 -prec afsai"
bin/fsai-dist -backend cuda $P -progress 0 -report $R/solve1.json > $R/solve1.log 2>&1; echo "solve1 rc $?"
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda $SH $P -progress 0 -report $R/solve2.json > $R/solve2.log 2>&1; echo "solve2 rc $?"
mpirun -np 4 --bind-to none --oversubscribe bin/fsai-dist -backend cuda -gpu.share $P -progress 0 -report $R/solve4.json > $R/solve4.log 2>&1; echo "solve4 rc $?"
for s in solve1 solve2 solve4; do python3 -c "import json;r=json.load(open('$R/$s.json'));p=r['prec_info'];print('$s', r['iterations'], r['relres'], r['prec_setup_s'], r['solve_s'], 'early_rows', p.get('early_rows'), 'gather', p['gather_s'], 'compute', p['compute_s'])"; done
bin/ab.sh $R d200np1 1 $P
bin/ab.sh $R d200np2 2 $SH $P
FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $SH $P -maxit 1 -progress 0 > $R/dbg2.log 2>&1
grep DBG $R/dbg2.log | sort -k3 -n | grep -vE 'step|levels|kept sized|kept assembled'
