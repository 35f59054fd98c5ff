#!/usr/bin/env bash
# session 14, lease 12 (nvidia-h200-x2): the last commit's GPU tests (StartRows against the serial
# InteriorRows, the set-up, the spare memory) and diffusion:200 on two GPUs
set -uo pipefail
. scripts/env.sh
R=$OUT/run12; mkdir -p $R
trap 'cd $OUT && tar czf run12.tgz run12' EXIT
cp bin/s14run12.sh $R/
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'StartRows|AdaptiveFactor|Spare|Transpose' > $R/gpu-tests.log 2>&1; echo "gpu tests rc $?")
echo "PASS lines: $(grep -c -- '--- PASS' $R/gpu-tests.log), FAIL lines: $(grep -c -- '--- FAIL' $R/gpu-tests.log)"
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -progress 0 -report $R/d200-np2.json > $R/d200-np2.log 2>&1
python3 -c "import json; d=json.load(open('$R/d200-np2.json')); print('np2', d['iterations'], d['relres'], d['prec_setup_s'])"
