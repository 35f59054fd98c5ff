#!/usr/bin/env bash
# session 11, lease 7: the gradient with 8, 16, 32 lanes as templates (old: levels, 5ffc4a9)
R=$OUT/run7; mkdir -p $R; trap 'cd $OUT && tar czf run7.tgz run7' EXIT
. scripts/env.sh
(cd gpu && timeout 240 ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile|Transpose' > $R/gpu-test.log 2>&1; echo "rc $?" >> $R/gpu-test.log)
grep -E '^(--- FAIL|FAIL|ok|PASS|panic|rc )' $R/gpu-test.log | head; grep -c -- '--- PASS' $R/gpu-test.log
bin/ab.sh $R d200np1 1 -problem diffusion:200 -prec afsai
bin/ab.sh $R p320np1 1 -problem poisson7:320 -prec afsai
timeout 100 /usr/local/cuda/bin/ncu -k 'regex:fsai_kapgrad' --metrics gpu__time_duration.sum --csv \
  bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0 > $R/ncu200.csv 2> $R/ncu200.err
(cd pcg && timeout 150 ../bin/pcg.test -test.run OnGPU > $R/pcg-test.log 2>&1; echo "rc $?" >> $R/pcg-test.log)
tail -2 $R/pcg-test.log
