#!/usr/bin/env bash
# session 13, lease 1: finer timing prints of the two-GPU set-up's end (0ad321c)
R=$OUT/run1; mkdir -p $R; trap 'cd $OUT && tar czf run1.tgz run1' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
P="-problem diffusion:200 -prec afsai"
for i in 1 2; do FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/np2-$i.json > $R/np2-$i.log 2>&1; done
FSAI_DBG=1 mpirun -np 1 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/np1.json > $R/np1.log 2>&1
grep 'DBG r1' $R/np2-2.log | sort -k3 -n | awk '/finished, reached/{p=1} p' | head -60
