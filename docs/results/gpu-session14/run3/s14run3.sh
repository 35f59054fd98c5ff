#!/usr/bin/env bash
# session 14, lease 3 (nvidia-h200-x4): the set-up's state kept as spare device memory (no free at
# the set-up's end): the GPU tests; poisson7:400 on four GPUs, diffusion:200 on one and two, before
# (633375c, fsai-dist-old) and after alternately, twice each; Open MPI with and without CMA
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run3; mkdir -p $R
trap 'cd $OUT && tar czf run3.tgz run3' EXIT
cp bin/s14run3.sh $R/
grep CapEff /proc/self/status > $R/sys.txt; echo "mech=${OMPI_MCA_btl_vader_single_copy_mechanism:-unset}" >> $R/sys.txt
(cd gpu && timeout 300 ../bin/gpu.test -test.v -test.run 'Spare|AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose' > $R/gpu-tests.log 2>&1; echo "gpu tests rc $?")
grep -c '^    --- PASS\|^--- PASS' $R/gpu-tests.log; grep -- '--- FAIL' $R/gpu-tests.log | head; grep -A8 'TestSpare' $R/gpu-tests.log | head -12
(cd pcg && timeout 120 ../bin/pcg.test -test.v -test.run OnGPU > $R/pcg-tests.log 2>&1; echo "pcg tests rc $?")
bin/ab.sh $R p400 4 -problem poisson7:400 -prec afsai | tee $R/ab-p400.txt
bin/ab.sh $R d200np1 1 -problem diffusion:200 -prec afsai | tee $R/ab-d200np1.txt
bin/ab.sh $R d200np2 2 -problem diffusion:200 -prec afsai | tee $R/ab-d200np2.txt
for i in 1 2; do for m in none cma; do
  OMPI_MCA_btl_vader_single_copy_mechanism=$m mpirun -np 4 --bind-to none bin/fsai-dist -backend cuda -problem poisson7:400 -prec afsai -maxit 1 -progress 0 -report $R/p400-$m-$i.json > $R/p400-$m-$i.log 2>&1
  python3 -c "import json; d=json.load(open('$R/p400-$m-$i.json')); p=d['prec_info']; print('$m $i', round(d['prec_setup_s'],4), 'gather', round(p['gather_s'],4), 'transpose', round(p['transpose_s'],4))" | tee -a $R/summary.txt
done; done
mpirun -np 4 --bind-to none bin/fsai-dist -backend cuda -problem poisson7:400 -prec afsai -progress 0 -report $R/p400-full.json > $R/p400-full.log 2>&1
python3 -c "import json; d=json.load(open('$R/p400-full.json')); print('full', d['iterations'], d['relres'], d['prec_setup_s'], d['solve_s'])" | tee -a $R/summary.txt
