#!/usr/bin/env bash
# session 12, lease 3: + rows listed by the join, border pointers trimmed, no false sharing in LongestRow and serve (GPU tests; old = HEAD 8334664 vs new; dbg marks)
R=$OUT/run3; mkdir -p $R; trap 'cd $OUT && tar czf run3.tgz run3' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile|Transpose' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head
(cd pcg && ../bin/pcg.test -test.run OnGPU > $R/pcgtest.log 2>&1); echo "pcg tests rc $?"
P="-problem diffusion:200 -prec afsai"
bin/fsai-dist -backend cuda $P -progress 0 -report $R/solve.json > $R/solve.log 2>&1; echo "solve rc $?"
python3 -c "import json;r=json.load(open('$R/solve.json'));print('solve', r['iterations'], r['relres'] if 'relres' in r else '', r['prec_setup_s'], r['solve_s'])"
bin/ab.sh $R d200np1 1 $P
bin/ab.sh $R d200np2share 2 -gpu.share $P
FSAI_DBG=1 bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 > $R/dbg1.log 2>&1
FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda -gpu.share $P -maxit 1 -progress 0 > $R/dbg2.log 2>&1
grep DBG $R/dbg1.log; grep DBG $R/dbg2.log | sort -k3 -n
