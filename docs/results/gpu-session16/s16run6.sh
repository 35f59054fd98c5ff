#!/usr/bin/env bash
# session 16 run 6: static FSAI on the stored matrices, CUDA against CPU backend, 1 and 2 ranks; long patterns
R=$OUT/run6; mkdir -p $R; trap 'cd $OUT && tar czf run6.tgz run6' EXIT
source scripts/env.sh
for m in bcsstk15 1138_bus bcsstk03 LF10; do for np in 1 2; do for be in cpu cuda; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend $be -matrix bin/mtx/$m.mtx -prec fsai -progress 0 -report $R/$m-$be-np$np.json > $R/$m-$be-np$np.log 2>&1
  python3 -c "
import json;r=json.load(open('$R/$m-$be-np$np.json'));p=r['prec_info'];print('$m $be np$np', 'its',r['iterations'],'relres %.3e'%r['relres'],'nnz',p['nnz'],'dropped',p['dropped'],'maxpat',p['max_pattern'],'fallback',p['fallback_rows'],p['setup_device'])" 2>&1 | tail -1
done; done; done
for k in 3 4 6; do bin/fsai-dist -backend cuda -problem poisson27:40 -prec fsai -fsai.k $k -progress 0 -report $R/p27-k$k.json > $R/p27-k$k.log 2>&1; python3 -c "
import json;r=json.load(open('$R/p27-k$k.json'));p=r['prec_info'];print('poisson27:40 k$k its',r['iterations'],'maxpat',p['max_pattern'],p['setup_device'],'prec_setup %.4f'%r['prec_setup_s'])"; done
