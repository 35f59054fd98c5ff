#!/usr/bin/env bash
# session 11, lease 3: warp-per-row border and solve on short lists only; per-launch profile at 8M rows
R=$OUT/run3; mkdir -p $R; trap 'cd $OUT && tar czf run3.tgz run3' EXIT
. scripts/env.sh
(cd gpu && timeout 200 ../bin/gpu.test -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile|Transpose' > $R/gpu-test.log 2>&1; echo "rc $?" >> $R/gpu-test.log)
grep -E '^(--- FAIL|FAIL|ok|PASS|panic|rc )' $R/gpu-test.log | head; grep -c -- '--- PASS' $R/gpu-test.log
bin/ab.sh $R d200np1 1 -problem diffusion:200 -prec afsai
timeout 150 /usr/local/cuda/bin/ncu -k 'regex:fsai_' --metrics gpu__time_duration.sum --csv \
  bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0 > $R/ncu200.csv 2> $R/ncu200.err
timeout 100 /usr/local/cuda/bin/ncu -k 'regex:fsai_' --metrics gpu__time_duration.sum --csv \
  bin/fsai-dist-old -backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0 > $R/ncu200-old.csv 2> $R/ncu200-old.err
echo done
