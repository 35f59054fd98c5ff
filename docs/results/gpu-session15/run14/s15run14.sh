#!/usr/bin/env bash
# session 15, run 14: the review commit (rowPart replaced by the part's block): the two-part set-up's GPU tests, diffusion:200 on two GPUs
R=$OUT/run14; mkdir -p $R; trap 'cd $OUT && tar czf run14.tgz run14' EXIT
. scripts/env.sh
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'StartRows|AdaptiveFactor|KernelsCompile|SpMM' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -progress 0 -report $R/d200-np2.json > $R/d200-np2.log 2>&1
python3 -c "import json; r=json.load(open('$R/d200-np2.json')); print(r['iterations'], repr(r['relres']), r['prec_setup_s'], r['prec_info']['early_rows'])"
