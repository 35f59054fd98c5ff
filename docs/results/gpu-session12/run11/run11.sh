#!/usr/bin/env bash
# session 12, lease 11: scripts/bench-afsai-gpu.sh on main (db0051f, the early set-up), the targets
R=$OUT/run11; mkdir -p $R; trap 'cd $OUT && tar czf run11.tgz run11' EXIT
nvidia-smi -L > $R/gpus.txt
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; echo "bench rc $?"
cat $R/bench.log
