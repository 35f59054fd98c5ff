#!/usr/bin/env bash
# session 15, run 10: static FSAI's systems on the device (-prec fsai -backend cuda): against run9 (set-up on the host), one and two GPUs; the fixed-pattern GPU tests
R=$OUT/run10; mkdir -p $R; trap 'cd $OUT && tar czf run10.tgz run10' EXIT
. scripts/env.sh
(cd gpu && timeout 200 ../bin/gpu.test -test.v -test.run 'Fixed|KernelsCompile' > $R/gpu-tests.log 2>&1; echo "rc $?" >> $R/gpu-tests.log)
echo "gpu tests: $(grep -c -- '--- PASS' $R/gpu-tests.log) PASS, $(grep -c -- '--- FAIL' $R/gpu-tests.log) FAIL"; tail -1 $R/gpu-tests.log
for i in 1 2; do for np in 1 2; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec fsai -progress 0 -report $R/fsai-np$np-$i.json > $R/fsai-np$np-$i.log 2>&1
done; done
mpirun -np 2 --bind-to none bin/fsai-dist -backend cpu -problem diffusion:64 -prec fsai -progress 0 -report $R/fsai-cpu-d64.json > $R/fsai-cpu-d64.log 2>&1
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem diffusion:64 -prec fsai -progress 0 -report $R/fsai-cuda-d64.json > $R/fsai-cuda-d64.log 2>&1
python3 - $R <<'PY'
import json,sys
R=sys.argv[1]
for f in ['fsai-np1-1','fsai-np1-2','fsai-np2-1','fsai-np2-2','fsai-cpu-d64','fsai-cuda-d64']:
    r=json.load(open(f'{R}/{f}.json')); i=r['prec_info']
    print(f"{f}: its {r['iterations']} relres {r['relres']!r} nnz {i.get('nnz')} setup {r['setup_s']:.3f} prec {r['prec_setup_s']:.3f} compute {i.get('compute_s',0):.3f} solve {r['solve_s']:.3f} on {i.get('setup_device')}")
PY
