#!/bin/bash
# session 10, run 1: SpMV/SpMM widths with aFSAI's factors
cd "$(dirname "$0")/.."
R=$OUT/run1; mkdir -p $R
trap 'cd $OUT && tar czf run1.tgz run1' EXIT
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > $R/gpu.txt
bin/gpu.test -test.run '^$' -test.bench 'FactorWidth' -test.benchtime 50x -fsai.n 200 > $R/factor-width.log 2>&1
