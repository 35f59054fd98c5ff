#!/usr/bin/env bash
# session 14, lease 10 (nvidia-h200-x2): the final code's GPU tests (the set-up's, the values-only
# update's, TestSpare) and pcg.test's GPU tests; diffusion:200 solved on one and two GPUs
set -uo pipefail
. scripts/env.sh
R=$OUT/run10; mkdir -p $R
trap 'cd $OUT && tar czf run10.tgz run10' EXIT
cp bin/s14run10.sh $R/
(cd gpu && timeout 300 ../bin/gpu.test -test.v -test.run 'Spare|AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose' > $R/gpu-tests.log 2>&1; echo "gpu tests rc $?")
echo "PASS lines: $(grep -c -- '--- PASS' $R/gpu-tests.log), FAIL lines: $(grep -c -- '--- FAIL' $R/gpu-tests.log)"
(cd pcg && timeout 200 ../bin/pcg.test -test.v -test.run OnGPU > $R/pcg-tests.log 2>&1; echo "pcg tests rc $?")
grep -- '--- ' $R/pcg-tests.log | head
for np in 1 2; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -progress 0 -report $R/d200-np$np.json > $R/d200-np$np.log 2>&1
  python3 -c "import json; d=json.load(open('$R/d200-np$np.json')); print('np$np', d['iterations'], d['relres'], d['setup_s'], d['prec_setup_s'], d['solve_s'])"
done
