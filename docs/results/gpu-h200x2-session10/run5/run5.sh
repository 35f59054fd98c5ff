#!/bin/bash
# session 10, run 5: the session's final code (7f6fe2f + docs): GPU test
# suites, the set-up issue's command on two GPUs, bench-afsai-gpu.sh,
# bench-rhs-gpu.sh, bench-library.sh
cd "$(dirname "$0")/.."
. scripts/env.sh
R=$OUT/run5; mkdir -p $R
trap 'cd $OUT && tar czf run5.tgz run5' EXIT
(cd gpu && timeout 240 ../bin/gpu.test -test.v > $R/gpu-test.log 2>&1; echo "rc $?" >> $R/gpu-test.log)
echo "gpu.test: $(tail -1 $R/gpu-test.log), $(grep -c -- '--- PASS' $R/gpu-test.log) passed, $(grep -c -- '--- FAIL' $R/gpu-test.log) failed" | tee $R/summary.txt
(cd pcg && timeout 120 ../bin/pcg.test -test.run OnGPU -test.v > $R/pcg-test.log 2>&1; echo "rc $?" >> $R/pcg-test.log)
echo "pcg.test OnGPU: $(tail -1 $R/pcg-test.log), $(grep -c -- '--- PASS' $R/pcg-test.log) passed" | tee -a $R/summary.txt
timeout 120 mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -report $R/issue5-np2.json > $R/issue5-np2.log 2>&1
echo "issue 5 command rc $?" | tee -a $R/summary.txt
timeout 240 scripts/bench-afsai-gpu.sh $R/afsai > $R/bench-afsai.log 2>&1
timeout 120 scripts/bench-rhs-gpu.sh $R/rhs > $R/bench-rhs.log 2>&1
timeout 120 scripts/bench-library.sh cuda poisson7:200 poisson7:100 $R/library > $R/bench-library.log 2>&1
