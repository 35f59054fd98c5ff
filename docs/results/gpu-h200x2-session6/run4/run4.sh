#!/usr/bin/env bash
# session 6, lease 4: the final code: GPU tests, UpdateValues on 1 and 2 GPUs, diffusion:200 on one GPU
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=$(mktemp -d)
trap 'tar czf "$OUT/run4.tgz" -C "$out" .' EXIT
(cd gpu && timeout 240 ../bin/gpu.test -test.v > $out/gpu-test-full.log 2>&1; echo "rc $?" >> $out/gpu-test-full.log)
grep -E '^(--- FAIL|FAIL|ok|PASS|panic|rc )|^    --- FAIL' $out/gpu-test-full.log | head -30
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -30
(cd solver && timeout 120 ../bin/solver.test -test.run '^$' -test.bench Update -test.benchtime 3x -solver.backend cuda -solver.problem poisson7:200 -solver.prec afsai) > $out/update-200.log 2>&1
grep -E "Update/|last Update|set-up on" $out/update-200.log
(cd solver && timeout 150 mpirun -np 2 --bind-to none ../bin/solver.test -test.run '^$' -test.bench Update -test.benchtime 3x -solver.backend cuda -solver.problem poisson7:200 -solver.prec afsai) > $out/update-200-np2.log 2>&1
grep -E "Update/|last Update|set-up on" $out/update-200-np2.log
timeout 120 bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -progress 0 -report $out/d200.json > $out/d200.log 2>&1
python3 -c "
import json; r=json.load(open('$out/d200.json')); print('diffusion:200 one GPU: its', r['iterations'], 'setup %.3f solve %.3f' % (r['setup_s'], r['solve_s']))"
