#!/usr/bin/env bash
# session 15, run 2: experiment: one thread per row unrolled, against w1 and tiled
R=$OUT/run2; mkdir -p $R; trap 'cd $OUT && tar czf run2.tgz run2' EXIT
(cd gpu && timeout 300 ../bin/gpu.test -test.run '^$' -test.bench 'ExpUnroll' -test.benchtime 50x -fsai.n 200 > $R/exp.log 2>&1)
grep -E 'Exp' $R/exp.log | awk '{print $1, $3, $5, $7}'
