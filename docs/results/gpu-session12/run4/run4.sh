#!/usr/bin/env bash
# session 12, lease 4: + the border up to the last own row a left block stores (GPU tests; A/B against 8334664; dbg marks)
R=$OUT/run4; mkdir -p $R; trap 'cd $OUT && tar czf run4.tgz run4' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile|Transpose' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head
(cd pcg && ../bin/pcg.test -test.run OnGPU > $R/pcgtest.log 2>&1); echo "pcg tests rc $?"
P="-problem diffusion:200 -prec afsai"
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -gpu.share $P -progress 0 -report $R/solve2.json > $R/solve2.log 2>&1; echo "solve rc $?"
python3 -c "import json;r=json.load(open('$R/solve2.json'));print('solve np2', r['iterations'], r['relres'], r['prec_setup_s'], r['solve_s'])"
bin/ab.sh $R d200np2share 2 -gpu.share $P
bin/ab.sh $R p256np1 1 -problem poisson7:256 -prec afsai
FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda -gpu.share $P -maxit 1 -progress 0 > $R/dbg2.log 2>&1
grep DBG $R/dbg2.log | sort -k3 -n | grep -E 'gather|AF start|join|AF setup'
bin/gpu.test -test.run '^$' -test.bench Memory > $R/bench-memory.log 2>&1; cat $R/bench-memory.log | grep -E 'Benchmark|ok'
