#!/bin/bash
# session 10, run 11: GPU tests after the batch buffers only jobs use are allocated for them only
cd "$(dirname "$0")/.."
. scripts/env.sh
R=$OUT/run11; mkdir -p $R
trap 'cd $OUT && tar czf run11.tgz run11' EXIT
(cd gpu && timeout 200 ../bin/gpu.test -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile|Transpose' -test.v > $R/gpu-test.log 2>&1; echo "rc $?" >> $R/gpu-test.log)
echo "gpu.test: $(tail -1 $R/gpu-test.log), $(grep -c -- '--- PASS' $R/gpu-test.log) passed, $(grep -c -- '--- FAIL' $R/gpu-test.log) failed" | tee $R/summary.txt
(cd pcg && timeout 120 ../bin/pcg.test -test.run OnGPU -test.v > $R/pcg-test.log 2>&1; echo "rc $?" >> $R/pcg-test.log)
echo "pcg.test OnGPU: $(tail -1 $R/pcg-test.log), $(grep -c -- '--- PASS' $R/pcg-test.log) passed" | tee -a $R/summary.txt
