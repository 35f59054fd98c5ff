#!/usr/bin/env bash
# session 6, lease 1: the device update (PlacingPlan): GPU tests, UpdateValues benchmark, probe for nsys and a multi-RHS profile
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=$(mktemp -d)
trap 'tar czf "$OUT/run1.tgz" -C "$out" .' EXIT
(cd gpu && timeout 200 ../bin/gpu.test -test.v 2>&1 | grep -E '^(--- FAIL|FAIL|ok|PASS|panic)|_test.go:|Places' | tail -40) > $out/gpu-test.log 2>&1
tail -5 $out/gpu-test.log
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|update_gpu_test|round' | tail -30) > $out/pcg-test.log 2>&1
tail -12 $out/pcg-test.log
for p in 100 128 200; do
  (cd solver && timeout 120 ../bin/solver.test -test.run '^$' -test.bench Update -test.benchtime 3x -solver.backend cuda -solver.problem poisson7:$p -solver.prec afsai) > $out/update-$p.log 2>&1
  grep -E "Update/|last Update|set-up on" $out/update-$p.log
done
which nsys ncu > $out/tools.txt 2>&1; ls /usr/local/cuda/bin >> $out/tools.txt 2>&1; head -3 $out/tools.txt
