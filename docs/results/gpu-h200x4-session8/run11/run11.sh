#!/usr/bin/env bash
# session 8, lease 11 (nvidia-h200-x4): the final code after the review: gpu FSAI tests and pcg GPU tests
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
out=$(mktemp -d)
trap 'tar czf "$OUT/run11.tgz" -C "$out" .' EXIT
(cd gpu && timeout 200 ../bin/gpu.test -test.run 'AdaptiveFactor|AdaptiveSetup|Fixed|KernelsCompile' -test.v > $out/gpu-test.log 2>&1; echo "rc $?" >> $out/gpu-test.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/gpu-test.log | head -30
(cd pcg && timeout 150 ../bin/pcg.test -test.run 'OnGPU' -test.v > $out/pcg-test-full.log 2>&1; echo "rc $?" >> $out/pcg-test-full.log)
grep -E '^(--- |ok|FAIL|PASS|rc )' $out/pcg-test-full.log | head -20
