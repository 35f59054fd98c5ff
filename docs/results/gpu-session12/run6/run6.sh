#!/usr/bin/env bash
# session 12, lease 6: scripts/bench-afsai-gpu.sh on main (a32b037), the targets
R=$OUT/run6; mkdir -p $R; trap 'cd $OUT && tar czf run6.tgz run6' EXIT
nvidia-smi -L > $R/gpus.txt
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; echo "bench rc $?"
cat $R/bench.log
