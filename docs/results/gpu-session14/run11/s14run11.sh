#!/usr/bin/env bash
# session 14, lease 11 (nvidia-h200-x2): transposeBlock's path for scattered blocks (HEAD) against
# e133835, whole solves, poisson7:400 on two GPUs; the timing build
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run11; mkdir -p $R
trap 'cd $OUT && tar czf run11.tgz run11' EXIT
cp bin/s14run11.sh $R/
bin/ab2.sh $R p400np2 2 -problem poisson7:400 -prec afsai | tee $R/ab-p400np2.txt
FSAI_DBG=1 mpirun -np 2 --bind-to none bin/fsai-dbg -backend cuda -problem poisson7:400 -prec afsai -maxit 1 -progress 0 -report $R/p400np2-dbg.json > $R/p400np2-dbg.log 2>&1
grep 'T: \|fM: ' $R/p400np2-dbg.log
true
