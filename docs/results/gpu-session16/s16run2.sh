#!/usr/bin/env bash
# session 16 run 2: GPU and PCG-on-GPU test suites after the static set-up; static on two GPUs, old (host) vs new
R=$OUT/run2; mkdir -p $R; trap 'cd $OUT && tar czf run2.tgz run2' EXIT
source scripts/env.sh
nvidia-smi -L > $R/gpu.txt
(cd gpu && timeout 300 ../bin/gpu.test -test.v -test.run 'Spare|AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose|Static|Refuse' > $R/gpu-tests.txt 2>&1); echo "gpu tests rc $?"
grep -c -- '--- PASS' $R/gpu-tests.txt; grep -m5 -B2 -A8 -- '--- FAIL\|panic' $R/gpu-tests.txt | head -40
(cd pcg && timeout 200 ../bin/pcg.test -test.v -test.run OnGPU > $R/pcg-tests.txt 2>&1); echo "pcg tests rc $?"
grep -c -- '--- PASS' $R/pcg-tests.txt; grep -- '--- FAIL' $R/pcg-tests.txt | head
bash bin/abs.sh $R static2 2 -problem diffusion:200 -prec fsai
