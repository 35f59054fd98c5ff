#!/bin/bash
# session 10, run 3: CPU profiles of the set-up on 2 GPUs (where the
# collection of the neighbour's rows goes)
cd "$(dirname "$0")/.."
. scripts/env.sh
R=$OUT/run3; mkdir -p $R
trap 'cd $OUT && tar czf run3.tgz run3' EXIT
for p in diffusion:200 poisson7:320; do
  n=${p/:/}
  mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem $p -prec afsai -progress 0 -report $R/$n-np2.json -cpuprofile $R/$n-np2.prof > $R/$n-np2.log 2>&1
  bin/fsai-dist -backend cuda -problem $p -prec afsai -progress 0 -report $R/$n-np1.json -cpuprofile $R/$n-np1.prof > $R/$n-np1.log 2>&1
done
nproc > $R/nproc.txt
