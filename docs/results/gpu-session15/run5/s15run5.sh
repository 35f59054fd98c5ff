#!/usr/bin/env bash
# session 15, run 5: batched loads in the plain one-thread-per-row product only: tests, old/new, mixed against wide, issue 5's benchmark
R=$OUT/run5; mkdir -p $R; trap 'cd $OUT && tar czf run5.tgz run5' EXIT
. scripts/env.sh
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'SpMV|SpMM|KernelsCompile|Block|Peer|Halo' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
(cd pcg && timeout 200 ../bin/pcg.test -test.v -test.run OnGPU > $R/pcg-tests.log 2>&1; echo "rc $?" >> $R/pcg-tests.log)
echo "pcg tests: $(grep -c -- '--- PASS' $R/pcg-tests.log) PASS, $(grep -c -- '--- FAIL' $R/pcg-tests.log) FAIL"; tail -1 $R/pcg-tests.log
for i in 1 2; do for v in old new; do
  t=../bin/gpu.test; [ $v = old ] && t=../bin/gpu-old.test
  (cd gpu && timeout 100 $t -test.run '^$' -test.bench 'Bandwidth/spmv' -test.benchtime 50x -gpu.n 256 > $R/bw-$v-$i.log 2>&1)
done; done
for f in $R/bw-*.log; do echo "== $(basename $f)"; grep -E 'w1-|spmvdot' $f | awk '{print $1, $5}' | sed 's/Benchmark//; s/-32 / /'; done
bin/abs.sh $R d200-afsai 1 -problem diffusion:200 -prec afsai
bin/abs.sh $R d200-jacobi 1 -problem diffusion:200 -prec jacobi
for i in 1 2 3; do
  bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -matrix.narrow=false -progress 0 -report $R/wide-$i.json > $R/wide-$i.log 2>&1
  bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -afsai.apply single -progress 0 -report $R/mixed-$i.json > $R/mixed-$i.log 2>&1
done
python3 - $R <<'PY'
import json,sys
R=sys.argv[1]
w=[json.load(open(f'{R}/wide-{i}.json'))['iter_s'] for i in (1,2,3)]
m=[json.load(open(f'{R}/mixed-{i}.json'))['iter_s'] for i in (1,2,3)]
print('wide ms/it', [round(1e3*x,4) for x in w], 'mixed ms/it', [round(1e3*x,4) for x in m], 'ratios', [round(a/b,3) for a,b in zip(w,m)])
PY
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; tail -22 $R/bench.log
