#!/usr/bin/env bash
# session 12, lease 12: timing prints of the end of the early set-up's Finish (c958b31)
R=$OUT/run12; mkdir -p $R; trap 'cd $OUT && tar czf run12.tgz run12' EXIT
. scripts/env.sh
P="-problem diffusion:200 -prec afsai"
for i in 1 2; do FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 > $R/dbg2-$i.log 2>&1; done
grep 'DBG r1' $R/dbg2-2.log | sort -k3 -n | awk '/second part computed/{p=1} p' | head -20
