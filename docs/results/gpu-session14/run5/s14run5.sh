#!/usr/bin/env bash
# session 14, lease 5 (nvidia-h200-x4): receive buffers mapped on all cores, one right-hand side's
# known solution filled on the device: poisson7:400 on four GPUs and diffusion:200 on two, before
# (d2ae44e, fsai-dist-old) and after alternately, whole solves; then the scaling studies on 1, 2, 4
# GPUs with the final code (strong poisson7:400 and diffusion:320, weak 1,771,561 rows per GPU)
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run5; mkdir -p $R
trap 'cd $OUT && tar czf run5.tgz run5' EXIT
cp bin/s14run5.sh bin/ab2.sh $R/
bin/ab2.sh $R p400 4 -problem poisson7:400 -prec afsai | tee $R/ab-p400.txt
bin/ab2.sh $R d200np2 2 -problem diffusion:200 -prec afsai | tee $R/ab-d200np2.txt
timeout 170 bin/fsai-scale strong -warmup -ranks 1,2,4 -problem poisson7:400 -out $R/strong-poisson7400 -- -backend cuda -prec afsai > $R/strong-poisson7400.log 2>&1
cut -d, -f1,7-12 $R/strong-poisson7400/scaling.csv | tee -a $R/summary.txt
timeout 100 bin/fsai-scale weak -warmup -ranks 1,2,4 -rows-per-rank 1771561 -family poisson7 -out $R/weak-1771561 -- -backend cuda -prec afsai > $R/weak-1771561.log 2>&1
cut -d, -f1,7-12 $R/weak-1771561/scaling.csv | tee -a $R/summary.txt
timeout 170 bin/fsai-scale strong -warmup -ranks 1,2,4 -problem diffusion:320 -out $R/strong-diffusion320 -- -backend cuda -prec afsai > $R/strong-diffusion320.log 2>&1
cut -d, -f1,7-12 $R/strong-diffusion320/scaling.csv | tee -a $R/summary.txt
