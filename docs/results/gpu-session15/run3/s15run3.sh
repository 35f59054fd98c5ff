#!/usr/bin/env bash
# session 15, run 3: SpMV with each lane's loads batched: tests, benchmarks, solves against the binary before, issue 5's benchmark
R=$OUT/run3; mkdir -p $R; trap 'cd $OUT && tar czf run3.tgz run3' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
(cd gpu && timeout 240 ../bin/gpu.test -test.v -test.run 'SpMV|SpMM|KernelsCompile|Block|Peer|Halo' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
(cd pcg && timeout 200 ../bin/pcg.test -test.v -test.run OnGPU > $R/pcg-tests.log 2>&1; echo "rc $?" >> $R/pcg-tests.log)
echo "pcg tests: $(grep -c -- '--- PASS' $R/pcg-tests.log) PASS, $(grep -c -- '--- FAIL' $R/pcg-tests.log) FAIL"; tail -1 $R/pcg-tests.log
bin/abs.sh $R d200-afsai 1 -problem diffusion:200 -prec afsai
bin/abs.sh $R d200-jacobi 1 -problem diffusion:200 -prec jacobi
bin/abs.sh $R p256-jacobi 1 -problem poisson7:256 -prec jacobi
bin/abs.sh $R d200-afsai-np2 2 -problem diffusion:200 -prec afsai
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; tail -22 $R/bench.log
(cd gpu && timeout 200 ../bin/gpu.test -test.run '^$' -test.bench 'FactorWidth' -test.benchtime 50x -fsai.n 200 > $R/factor.log 2>&1)
grep -E 'spmv/' $R/factor.log | awk '{print $1, $3, $5, $7}'
(cd gpu && timeout 120 ../bin/gpu.test -test.run '^$' -test.bench 'Bandwidth' -test.benchtime 50x -gpu.n 256 > $R/bandwidth.log 2>&1)
grep -E 'copy|spmv' $R/bandwidth.log | awk '{print $1, $3, $5, $7, $9}'
(cd gpu && timeout 200 ../bin/gpu.test -test.run '^$' -test.bench 'SpMVWidth' -test.benchtime 20x > $R/width.log 2>&1)
grep -E 'SpMVWidth' $R/width.log | awk '{print $1, $3, $5, $7}'
