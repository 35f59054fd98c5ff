#!/usr/bin/env bash
# session 15, run 13: SpMM's batched loads where they were faster (one column per lane, or float64): block tests, BenchmarkSpMM old/new
R=$OUT/run13; mkdir -p $R; trap 'cd $OUT && tar czf run13.tgz run13' EXIT
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'SpMM|Block|SpMV' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
for v in old new; do
  t=../bin/gpu.test; [ $v = old ] && t=../bin/gpu-old.test
  (cd gpu && timeout 100 $t -test.run '^$' -test.bench 'SpMM' -test.benchtime 30x > $R/spmm-$v.log 2>&1)
done
python3 - $R <<'PY'
import sys,re,collections
R=sys.argv[1]
d=collections.defaultdict(dict)
for v in ('old','new'):
    for line in open(f'{R}/spmm-{v}.log'):
      m=re.match(r'BenchmarkSpMM/(\S+)-\d+\s+\d+\s+\S+ ns/op\s+(\S+) GB/s',line)
      if m: d[m.group(1)][v]=float(m.group(2))
for k,x in d.items():
  print(f"{k:28} old {x.get('old',0):6.0f} new {x.get('new',0):6.0f} ratio {x.get('new',0)/x.get('old',1):.3f}")
PY
