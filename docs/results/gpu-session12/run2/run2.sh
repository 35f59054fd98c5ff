#!/usr/bin/env bash
# session 12, lease 2: levels in the batch's dead Cholesky factors (GPU tests; old = HEAD 8334664 vs new; dbg marks)
R=$OUT/run2; mkdir -p $R; trap 'cd $OUT && tar czf run2.tgz run2' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile|Transpose' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head
P="-problem diffusion:200 -prec afsai"
bin/ab.sh $R d200np1 1 $P
bin/ab.sh $R d200np2share 2 -gpu.share $P
FSAI_DBG=1 bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 > $R/dbg1.log 2>&1
FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda -gpu.share $P -maxit 1 -progress 0 > $R/dbg2.log 2>&1
grep DBG $R/dbg1.log; grep DBG $R/dbg2.log | sort -k3 -n
