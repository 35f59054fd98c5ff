#!/usr/bin/env bash
# session 11, lease 10: where two ranks spend the collection (sharing one H200: x2 no longer lent) (a build with stage prints, not committed)
R=$OUT/run10; mkdir -p $R; trap 'cd $OUT && tar czf run10.tgz run10' EXIT
. scripts/env.sh
for i in 1 2; do
  mpirun -np 2 --bind-to none bin/fsai-dbg -backend cuda -gpu.share -problem diffusion:200 -prec afsai -maxit 1 -progress 0 -report $R/np2-$i.json > $R/np2-$i.log 2>&1
  grep "^rank" $R/np2-$i.log | sort -k1,2 -s
done
