#!/usr/bin/env bash
# session 15, run 4: batched loads for one thread per row only: microbenchmarks old/new alternately, solves, issue 5's benchmark
R=$OUT/run4; mkdir -p $R; trap 'cd $OUT && tar czf run4.tgz run4' EXIT
. scripts/env.sh
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'SpMV|SpMM|KernelsCompile' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
for i in 1 2; do for v in old new; do
  t=../bin/gpu.test; [ $v = old ] && t=../bin/gpu-old.test
  (cd gpu && timeout 100 $t -test.run '^$' -test.bench 'Bandwidth' -test.benchtime 50x -gpu.n 256 > $R/bw-$v-$i.log 2>&1)
  (cd gpu && timeout 100 $t -test.run '^$' -test.bench 'FactorWidth/.*/.*/spmv' -test.benchtime 50x -fsai.n 200 > $R/fw-$v-$i.log 2>&1)
done; done
for f in $R/bw-*.log $R/fw-*.log; do echo "== $(basename $f)"; grep -E 'spmv' $f | awk '{print $1, $5}' | sed 's/Benchmark//; s/-32 / /'; done
bin/abs.sh $R d200-afsai 1 -problem diffusion:200 -prec afsai
bin/abs.sh $R d200-jacobi 1 -problem diffusion:200 -prec jacobi
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; tail -22 $R/bench.log
