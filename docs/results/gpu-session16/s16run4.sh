#!/usr/bin/env bash
# session 16 run 4: static pattern search with rows end to end, sorted gather: tests; e16a25f (old) vs new on diffusion:200, 1 and 2 GPUs
R=$OUT/run4; mkdir -p $R; trap 'cd $OUT && tar czf run4.tgz run4' EXIT
source scripts/env.sh
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'Static|Refuse|Fixed|KernelsCompile' > $R/gpu-tests.txt 2>&1); echo "gpu tests rc $?"
grep -c -- '--- PASS' $R/gpu-tests.txt; grep -m5 -B2 -A8 -- '--- FAIL\|panic' $R/gpu-tests.txt | head -40
for np in 1 2; do bash bin/abs.sh $R st$np $np -problem diffusion:200 -prec fsai; done
for f in $R/st*-new-1.json $R/st*-old-1.json; do python3 -c "
import json,sys;r=json.load(open('$f'));p=r['prec_info'];k=p['setup_kernels'];print('$f'.split('/')[-1],round(r['prec_setup_s']*1e3,1),{x[:-2]:round(v*1e3,2) for x,v in k.items() if v})"; done
