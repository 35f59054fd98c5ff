#!/usr/bin/env bash
# session 15, run 1: the tiled SpMV: tests, benchmarks, whole solves against the binary before
R=$OUT/run1; mkdir -p $R; trap 'cd $OUT && tar czf run1.tgz run1' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
(cd gpu && timeout 240 ../bin/gpu.test -test.v -test.run 'SpMV|SpMM|Tiled|KernelsCompile' > $R/tests.log 2>&1; echo "rc $?" >> $R/tests.log)
grep -c -- '--- PASS' $R/tests.log; grep -- '--- FAIL' $R/tests.log | head; tail -3 $R/tests.log
(cd gpu && timeout 200 ../bin/gpu.test -test.run '^$' -test.bench 'FactorWidth' -test.benchtime 50x -fsai.n 200 > $R/factor.log 2>&1)
grep -E 'spmv/' $R/factor.log | awk '{print $1, $3, $5, $7}'
(cd gpu && timeout 120 ../bin/gpu.test -test.run '^$' -test.bench 'Bandwidth' -test.benchtime 50x -gpu.n 256 > $R/bandwidth.log 2>&1)
grep -E 'copy|spmv' $R/bandwidth.log | awk '{print $1, $3, $5, $7, $9}'
bin/abs.sh $R d200-afsai 1 -problem diffusion:200 -prec afsai
bin/abs.sh $R d200-jacobi 1 -problem diffusion:200 -prec jacobi
bin/abs.sh $R p256-jacobi 1 -problem poisson7:256 -prec jacobi
bin/abs.sh $R d200-afsai-np2 2 -problem diffusion:200 -prec afsai
