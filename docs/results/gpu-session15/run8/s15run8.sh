#!/usr/bin/env bash
# session 15, run 8: the final code (4d4fde4): GPU tests, issue 5's benchmark, one and two GPUs
# alternately, the scaling studies on one and two GPUs
set -uo pipefail
R=$OUT/run8; mkdir -p $R; trap 'cd $OUT && tar czf run8.tgz run8' EXIT
. scripts/env.sh
nvidia-smi -L > $R/gpus.txt
(cd pcg && timeout 200 ../bin/pcg.test -test.v -test.run OnGPU > $R/pcg-tests.log 2>&1; echo "rc $?" >> $R/pcg-tests.log)
echo "pcg tests: $(grep -c -- '--- PASS' $R/pcg-tests.log) PASS, $(grep -c -- '--- FAIL' $R/pcg-tests.log) FAIL"; tail -1 $R/pcg-tests.log
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'SpMV|SpMM|Block|Peer|Halo|KernelsCompile|Spare' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
scripts/bench-afsai-gpu.sh $R/bench 200 > $R/bench.log 2>&1; echo "bench rc $?"; tail -22 $R/bench.log
P="-problem diffusion:200 -prec afsai"
for i in 1 2 3; do for np in 1 2; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend cuda $P -maxit 1 -progress 0 -report $R/alt-np$np-$i.json > $R/alt-np$np-$i.log 2>&1
done; done
python3 - $R <<'PY'
import json,sys,statistics as s
R=sys.argv[1]
t={1:[],2:[]}
for np in (1,2):
  for i in (1,2,3):
    t[np].append(json.load(open(f'{R}/alt-np{np}-{i}.json'))['prec_setup_s'])
print('np1', ' '.join('%.4f'%x for x in t[1]), 'np2', ' '.join('%.4f'%x for x in t[2]), 'medians %.4f %.4f ratio %.3f' % (s.median(t[1]), s.median(t[2]), s.median(t[2])/s.median(t[1])))
PY
timeout 150 bin/fsai-scale strong -warmup -ranks 1,2 -problem poisson7:400 -out $R/strong-poisson7400 -- -backend cuda -prec afsai > $R/strong-poisson7400.log 2>&1
cut -d, -f1,7-12 $R/strong-poisson7400/scaling.csv
timeout 100 bin/fsai-scale weak -warmup -ranks 1,2 -rows-per-rank 1771561 -family poisson7 -out $R/weak-1771561 -- -backend cuda -prec afsai > $R/weak-1771561.log 2>&1
cut -d, -f1,7-12 $R/weak-1771561/scaling.csv
