#!/usr/bin/env bash
# session 15, run 6: the gradient loads several sources' entries at once: the set-up's GPU tests, set-up times old (76279e9) / new
R=$OUT/run6; mkdir -p $R; trap 'cd $OUT && tar czf run6.tgz run6' EXIT
. scripts/env.sh
(cd gpu && timeout 300 ../bin/gpu.test -test.v -test.run 'Spare|AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; grep -m5 -- '--- FAIL' $R/gpu-tests.log; grep -m5 -B2 -A8 -- 'FAIL:' $R/gpu-tests.log | head -40; tail -1 $R/gpu-tests.log
bin/abs.sh $R d200 1 -problem diffusion:200 -prec afsai
bin/abs.sh $R p256 1 -problem poisson7:256 -prec afsai
bin/abs.sh $R d200-np2 2 -problem diffusion:200 -prec afsai
