#!/usr/bin/env bash
# session 6, lease 8: the reviewed code: GPU tests, the update on 1 GPU
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=$(mktemp -d)
trap 'tar czf "$OUT/run8.tgz" -C "$out" .' EXIT
(cd gpu && timeout 240 ../bin/gpu.test -test.v > $out/gpu-test-full.log 2>&1; echo "rc $?" >> $out/gpu-test-full.log)
grep -E '^(--- FAIL|FAIL|ok|PASS|panic|rc )|^    --- FAIL|^--- PASS: TestFixedPlan' $out/gpu-test-full.log | head -20
(cd pcg && timeout 200 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -20
(cd solver && timeout 120 ../bin/solver.test -test.run '^$' -test.bench Update -test.benchtime 3x -solver.backend cuda -solver.problem poisson7:200 -solver.prec afsai) > $out/update-200.log 2>&1
grep -E "Update/|last Update" $out/update-200.log
