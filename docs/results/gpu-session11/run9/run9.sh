#!/usr/bin/env bash
# session 11, lease 9: final code: GPU tests, PCG GPU tests, the set-up issue's benchmark, poisson7:320 A/B (old: 5ffc4a9)
R=$OUT/run9; mkdir -p $R; trap 'cd $OUT && tar czf run9.tgz run9' EXIT
. scripts/env.sh
(cd gpu && timeout 240 ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile|Transpose' > $R/gpu-test.log 2>&1; echo "rc $?" >> $R/gpu-test.log)
grep -E '^(--- FAIL|FAIL|ok|PASS|panic|rc )' $R/gpu-test.log | head; grep -c -- '--- PASS' $R/gpu-test.log
(cd pcg && timeout 150 ../bin/pcg.test -test.run OnGPU > $R/pcg-test.log 2>&1; echo "rc $?" >> $R/pcg-test.log)
tail -2 $R/pcg-test.log
timeout 200 scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; tail -22 $R/bench.log
bin/ab.sh $R p320np1 1 -problem poisson7:320 -prec afsai
