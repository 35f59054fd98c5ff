#!/bin/bash
# session 10, run 4: per-rank timings of the 2-GPU set-up (temporary build with prints)
cd "$(dirname "$0")/.."
. scripts/env.sh
R=$OUT/run4; mkdir -p $R
trap 'cd $OUT && tar czf run4.tgz run4' EXIT
for p in poisson7:320 diffusion:200; do
  n=${p/:/}
  mpirun -np 2 --bind-to none bin/fsai-dist-timed -backend cuda -problem $p -prec afsai -progress 0 -maxit 1 -report $R/$n-np2.json > $R/$n-np2.log 2>&1
done
bin/fsai-dist-timed -backend cuda -problem poisson7:320 -prec afsai -progress 0 -maxit 1 -report $R/p320-np1.json > $R/p320-np1.log 2>&1
