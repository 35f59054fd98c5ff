#!/usr/bin/env bash
# session 6, lease 7 (nvidia-h200-x4): the set-up with the node's cores shared among unbound ranks (parallel.Share) against every rank on all cores (GOMAXPROCS=64)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=$(mktemp -d)
trap 'tar czf "$OUT/run7.tgz" -C "$out" .' EXIT
nproc > $out/nproc.txt
for rep in 1 2; do
for mode in share all; do
  env=""; [ $mode = all ] && env="-x GOMAXPROCS=$(nproc)"
  timeout 100 mpirun -np 4 --bind-to none $env bin/fsai-dist -backend cuda -problem poisson7:400 -prec afsai -afsai.reach 2 -progress 0 -report $out/p400-np4-$mode-$rep.json > $out/p400-np4-$mode-$rep.log 2>&1
  python3 -c "
import json; r=json.load(open('$out/p400-np4-$mode-$rep.json')); i=r['prec_info']
print('poisson7:400 4 GPUs $mode rep $rep: its', r['iterations'], 'setup %.3f solve %.3f' % (r['setup_s'], r['solve_s']), {k:round(v,3) for k,v in i.items() if k.endswith('_s')})"
done
done
