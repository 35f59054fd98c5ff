#!/usr/bin/env bash
# session 8, lease 7 (nvidia-h200-x4): the session's final code: pcg GPU tests; diffusion:200 on 1 GPU with Jacobi
# (Matrix.Diagonal on all cores) and aFSAI, twice each
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run7.tgz" -C "$out" .' EXIT
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -20
run() { name=$1; np=$2; shift 2; timeout 120 mpirun -np $np --bind-to none bin/fsai-dist -backend cuda -progress 0 -report $out/$name.json "$@" > $out/$name.log 2>&1; echo "$name rc $?"; }
for rep in 1 2; do
  run d200-np1-jacobi-$rep 1 -problem diffusion:200 -prec jacobi
  run d200-np1-afsai-$rep 1 -problem diffusion:200 -prec afsai
done
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f'))
print('$f'.split('/')[-1], d['iterations'], 'setup', round(d['setup_s'],3), 'solve', round(d['solve_s'],3))"; done
