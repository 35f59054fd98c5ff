#!/usr/bin/env bash
# session 16 run 7: static FSAI with long patterns (27-point stencil, k 2 and 3): GPU set-up against the CPU backend's
R=$OUT/run7; mkdir -p $R; trap 'cd $OUT && tar czf run7.tgz run7' EXIT
source scripts/env.sh
for spec in poisson27:40 poisson27:100; do for k in 2 3; do for be in cuda cpu; do
  bin/fsai-dist -backend $be -problem $spec -prec fsai -fsai.k $k -progress 0 -report $R/$spec-k$k-$be.json > $R/$spec-k$k-$be.log 2>&1
  python3 -c "
import json;r=json.load(open('$R/$spec-k$k-$be.json'));p=r['prec_info'];k=p.get('setup_kernels') or {};print('$spec k$k $be its',r['iterations'],'maxpat',p['max_pattern'],'nnz',p['nnz'],p['setup_device'],'prec_setup %.4f'%r['prec_setup_s'],'solve %.4f'%r['solve_s'],{x[:-2]:round(v*1e3,1) for x,v in k.items() if v})"
done; done; done
