#!/usr/bin/env bash
# session 14, lease 8 (nvidia-h200-x2; the four-GPU kind was no longer lent): served rows put in
# order through a bitmap, G's off-diagonal blocks packed and their receive buffers mapped on all
# cores (711b4e0) against e97fe09, whole solves, poisson7:400 and diffusion:200 on two GPUs;
# the timing build (marks in the assembly) on poisson7:400
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run8; mkdir -p $R
trap 'cd $OUT && tar czf run8.tgz run8' EXIT
cp bin/s14run8.sh $R/
bin/ab2.sh $R p400np2 2 -problem poisson7:400 -prec afsai | tee $R/ab-p400np2.txt
bin/ab2.sh $R d200np2 2 -problem diffusion:200 -prec afsai | tee $R/ab-d200np2.txt
FSAI_DBG=1 mpirun -np 2 --bind-to none bin/fsai-dbg -backend cuda -problem poisson7:400 -prec afsai -maxit 1 -progress 0 -report $R/p400np2-dbg.json > $R/p400np2-dbg.log 2>&1
