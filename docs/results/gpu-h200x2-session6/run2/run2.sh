#!/usr/bin/env bash
# session 6, lease 2: the device update with rows laid out on whole patterns: GPU tests, UpdateValues benchmark on 1 and 2 GPUs
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=$(mktemp -d)
trap 'tar czf "$OUT/run2.tgz" -C "$out" .' EXIT
(cd gpu && timeout 240 ../bin/gpu.test -test.v > $out/gpu-test-full.log 2>&1; echo "rc $?" >> $out/gpu-test-full.log)
grep -E '^(--- FAIL|FAIL|ok|PASS|panic|rc )|^    --- FAIL|fixed_place_test' $out/gpu-test-full.log | head -30
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )|update_gpu_test' $out/pcg-test-full.log | head -30
for p in 100 128 200; do
  (cd solver && timeout 120 ../bin/solver.test -test.run '^$' -test.bench Update -test.benchtime 3x -solver.backend cuda -solver.problem poisson7:$p -solver.prec afsai) > $out/update-$p.log 2>&1
  grep -E "Update/|last Update|set-up on" $out/update-$p.log
done
(cd solver && timeout 150 mpirun -np 2 --bind-to none ../bin/solver.test -test.run '^$' -test.bench Update -test.benchtime 3x -solver.backend cuda -solver.problem poisson7:200 -solver.prec afsai) > $out/update-200-np2.log 2>&1
grep -E "Update/|last Update|set-up on" $out/update-200-np2.log
