#!/usr/bin/env bash
# session 16 run 1: static FSAI set-up on the GPU: tests, then diffusion:200 old (host set-up) vs new
R=$OUT/run1; mkdir -p $R; trap 'cd $OUT && tar czf run1.tgz run1' EXIT
source scripts/env.sh
nvidia-smi -L > $R/gpu.txt
(cd gpu && timeout 240 ../bin/gpu.test -test.v -test.run 'Static|Refuse|KernelsCompile' > $R/gpu-static.txt 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS\|^--- PASS' $R/gpu-static.txt; grep -m5 -B2 -A8 'FAIL\|panic' $R/gpu-static.txt | head -60
(cd pcg && timeout 120 ../bin/pcg.test -test.v -test.run 'StaticFSAIOnGPU' > $R/pcg-static.txt 2>&1); echo "pcg tests rc $?"
grep 'static FSAI of\|FAIL\|PASS' $R/pcg-static.txt | head -20
bash bin/abs.sh $R static1 1 -problem diffusion:200 -prec fsai
for v in new old; do python3 -c "
import json;r=json.load(open('$R/static1-$v-1.json'));p=r['prec_info'];print('$v',p['setup_device'],p['nnz'],p.get('dropped'),p['max_pattern'],p.get('setup_kernels'))"; done
