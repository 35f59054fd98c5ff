#!/usr/bin/env bash
# session 13, lease 9: scripts/bench-afsai-gpu.sh on main (4619452), the targets
R=$OUT/run9; mkdir -p $R; trap 'cd $OUT && tar czf run9.tgz run9' EXIT
nvidia-smi -L > $R/gpus.txt
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; echo "bench rc $?"
cat $R/bench.log
