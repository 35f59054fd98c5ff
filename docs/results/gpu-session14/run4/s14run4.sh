#!/usr/bin/env bash
# session 14, lease 4 (nvidia-h200-x4): a rank searches for more rows only when an owner's rows lead
# on to another owner's stripe: poisson7:400 on four GPUs, before (9376f1e) and after alternately;
# the timing build on poisson7:400 (four GPUs) and diffusion:200 (one and two)
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run4; mkdir -p $R
trap 'cd $OUT && tar czf run4.tgz run4' EXIT
cp bin/s14run4.sh $R/
bin/ab.sh $R p400 4 -problem poisson7:400 -prec afsai | tee $R/ab-p400.txt
dbg() { name=$1; np=$2; shift 2; FSAI_DBG=1 mpirun -np $np --bind-to none bin/fsai-dbg -backend cuda "$@" -maxit 1 -progress 0 -report $R/$name.json > $R/$name.log 2>&1
  python3 -c "import json; d=json.load(open('$R/$name.json')); p=d['prec_info']; print('$name', round(d['prec_setup_s'],4), {k:round(v,4) for k,v in p.items() if k.endswith('_s')})" | tee -a $R/summary.txt; }
dbg p400-np4-dbg 4 -problem poisson7:400 -prec afsai
dbg d200-np2-dbg 2 -problem diffusion:200 -prec afsai
dbg d200-np1-dbg 1 -problem diffusion:200 -prec afsai
dbg d200-np2-dbg2 2 -problem diffusion:200 -prec afsai
