#!/usr/bin/env bash
# session 14, lease 2 (nvidia-h200-x4): the off-diagonal blocks of G' sent whole (transpose), the
# off-diagonal blocks made through a column bitmap, one block bound as it is: poisson7:400 on four
# GPUs, session start (f702a8e, fsai-dist-old) against the working tree alternately, twice each;
# the timing build; the same with Open MPI's single-copy (CMA) transport; diffusion:200 on two GPUs
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run2; mkdir -p $R
trap 'cd $OUT && tar czf run2.tgz run2' EXIT
cp bin/s14run2.sh $R/
cat /sys/kernel/mm/transparent_hugepage/enabled > $R/sys.txt 2>&1; cat /proc/sys/kernel/yama/ptrace_scope >> $R/sys.txt 2>&1
bin/ab.sh $R p400 4 -problem poisson7:400 -prec afsai | tee $R/ab-p400.txt
FSAI_DBG=1 mpirun -np 4 --bind-to none bin/fsai-dbg -backend cuda -problem poisson7:400 -prec afsai -maxit 1 -progress 0 -report $R/p400-dbg.json > $R/p400-dbg.log 2>&1
for i in 1 2; do
  OMPI_MCA_btl_vader_single_copy_mechanism=cma FSAI_DBG=1 timeout 60 mpirun -np 4 --bind-to none bin/fsai-dbg -backend cuda -problem poisson7:400 -prec afsai -maxit 1 -progress 0 -report $R/p400-cma-$i.json > $R/p400-cma-$i.log 2>&1; echo "cma rc $?"
done
python3 -c "
import json
for n in ['p400-dbg','p400-cma-1','p400-cma-2']:
  try:
    d=json.load(open('$R/'+n+'.json')); p=d['prec_info']; print(n, 'prec', round(d['prec_setup_s'],4), {k:round(v,4) for k,v in p.items() if k.endswith('_s')})
  except Exception as e: print(n, e)
" | tee $R/summary.txt
bin/ab.sh $R d200np2 2 -problem diffusion:200 -prec afsai | tee $R/ab-d200np2.txt
for v in old new; do b=bin/fsai-dist; [ $v = old ] && b=bin/fsai-dist-old
  mpirun -np 4 --bind-to none $b -backend cuda -problem poisson7:400 -prec afsai -progress 0 -report $R/p400-full-$v.json > $R/p400-full-$v.log 2>&1
  python3 -c "import json; d=json.load(open('$R/p400-full-$v.json')); print('$v', d['iterations'], d['relres'], d['prec_setup_s'], d['solve_s'])" | tee -a $R/summary.txt
done
