#!/usr/bin/env bash
# session 15, run 12: SpMM loads two of a part's entries before adding them (not the product with the dot): block tests, BenchmarkSpMM old/new alternately
R=$OUT/run12; mkdir -p $R; trap 'cd $OUT && tar czf run12.tgz run12' EXIT
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'SpMM|Block|SpMV' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
for i in 1 2; do for v in old new; do
  t=../bin/gpu.test; [ $v = old ] && t=../bin/gpu-old.test
  (cd gpu && timeout 100 $t -test.run '^$' -test.bench 'SpMM' -test.benchtime 30x > $R/spmm-$v-$i.log 2>&1)
done; done
python3 - $R <<'PY'
import sys,re,collections
R=sys.argv[1]
d=collections.defaultdict(dict)
for v in ('old','new'):
  for i in (1,2):
    for line in open(f'{R}/spmm-{v}-{i}.log'):
      m=re.match(r'BenchmarkSpMM/(\S+)-\d+\s+\d+\s+\S+ ns/op\s+(\S+) GB/s',line)
      if m: d[m.group(1)].setdefault(v,[]).append(float(m.group(2)))
for k,x in d.items():
  o,n=x.get('old',[0]),x.get('new',[0])
  print(f"{k:28} old {' '.join('%.0f'%a for a in o):>12} new {' '.join('%.0f'%a for a in n):>12} ratio {max(n)/max(o):.3f}")
PY
