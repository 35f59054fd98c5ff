#!/usr/bin/env bash
# session 14, lease 6 (nvidia-h200-x4): the timing build with marks in the binding of A and in
# G's transpose across ranks: poisson7:400 on four GPUs and one, diffusion:320 on four
set -uo pipefail
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
R=$OUT/run6; mkdir -p $R
trap 'cd $OUT && tar czf run6.tgz run6' EXIT
cp bin/s14run6.sh $R/
dbg() { name=$1; np=$2; shift 2; FSAI_DBG=1 mpirun -np $np --bind-to none bin/fsai-dbg -backend cuda "$@" -maxit 1 -progress 0 -report $R/$name.json > $R/$name.log 2>&1
  python3 -c "import json; d=json.load(open('$R/$name.json')); p=d['prec_info']; print('$name', round(d['setup_s'],4), round(d['bind_s'],4), round(d['prec_setup_s'],4), {k:round(v,4) for k,v in p.items() if k.endswith('_s')})" | tee -a $R/summary.txt; }
dbg p400-np4-a 4 -problem poisson7:400 -prec afsai
dbg p400-np4-b 4 -problem poisson7:400 -prec afsai
dbg p400-np1 1 -problem poisson7:400 -prec afsai
dbg d320-np4 4 -problem diffusion:320 -prec afsai
