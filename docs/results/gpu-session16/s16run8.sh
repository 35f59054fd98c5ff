#!/usr/bin/env bash
# session 16 run 8: review: rows-end-to-end helpers shared by kapgrad.cu and fsai_pattern.cu; tests, old vs new residuals
R=$OUT/run8; mkdir -p $R; trap 'cd $OUT && tar czf run8.tgz run8' EXIT
source scripts/env.sh
(cd gpu && timeout 300 ../bin/gpu.test -test.v -test.run 'Spare|AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose|Static|Refuse' > $R/gpu-tests.txt 2>&1); echo "gpu tests rc $?"
grep -c -- '--- PASS' $R/gpu-tests.txt; grep -m5 -B2 -A8 -- '--- FAIL\|panic' $R/gpu-tests.txt | head -40
for p in afsai fsai; do bash bin/abs.sh $R $p 1 -problem diffusion:200 -prec $p; done
