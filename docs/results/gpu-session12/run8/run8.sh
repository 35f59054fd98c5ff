#!/usr/bin/env bash
# session 12, lease 8: pack without false sharing (A/B against a32b037, 2 GPUs); timing prints of the collection's exchange
R=$OUT/run8; mkdir -p $R; trap 'cd $OUT && tar czf run8.tgz run8' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
SH=""; [ $(nvidia-smi -L | wc -l) -lt 2 ] && SH=-gpu.share
P="-problem diffusion:200 -prec afsai"
bin/ab.sh $R d200np2 2 $SH $P
for i in 1 2; do FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $SH $P -maxit 1 -progress 0 > $R/dbg2-$i.log 2>&1; done
grep DBG $R/dbg2-2.log | sort -k3 -n | grep -E 'gather|xr:|AF start|agreed'
