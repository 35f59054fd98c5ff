#!/usr/bin/env bash
# session 15, run 7: where G's transpose on the device spends its time (ncu, diffusion:200, one GPU)
R=$OUT/run7; mkdir -p $R; trap 'cd $OUT && tar czf run7.tgz run7' EXIT
. scripts/env.sh
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0 > /dev/null 2>&1
timeout 200 $NCU -k 'regex:transpose' --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size --csv \
  bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0 > $R/ncu.csv 2> $R/ncu.err
echo "ncu rc $?"
python3 - $R/ncu.csv <<'PY'
import csv,sys
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
h=rows[0]; ki=h.index('Kernel Name'); mi=h.index('Metric Name'); vi=h.index('Metric Value'); ii=h.index('ID')
from collections import OrderedDict
d=OrderedDict()
for r in rows[1:]:
    d.setdefault((r[ii],r[ki]),{})[r[mi]]=r[vi]
for (i,k),m in d.items():
    print(i,k[:40],m.get('gpu__time_duration.sum'),m.get('dram__bytes_read.sum'),m.get('dram__bytes_write.sum'),m.get('launch__grid_size'))
PY
