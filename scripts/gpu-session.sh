#!/usr/bin/env bash
# Everything the GPU machine runs in one lease (carry bin/): the GPU tests,
# the Jacobi benchmark against CuPy (with two GPUs, the scaling and the
# hidden halo), the library benchmarks (several right-hand sides,
# UpdateValues), and with AFSAI=1 the aFSAI benchmark and the scaling
# studies; packed into $OUT/gpu-session.tgz.
#
# Build here first:
#   go build -o bin/fsai-dist ./cmd/fsai-dist && go build -o bin/fsai-scale ./cmd/fsai-scale &&
#   for p in gpu pcg solver; do go test -c -o bin/$p.test ./$p; done
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
# $OUT brings back only a few files: work in a folder and pack it at the end
out=$(mktemp -d)
trap 'tar czf "${OUT:-.}/gpu-session.tgz" -C "$out" .' EXIT
(cd gpu && ../bin/gpu.test 2>&1 | tail -3) | tee "$out/gpu-test.log"
(cd pcg && ../bin/pcg.test -test.run 'OnGPU' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|iterations on the GPU' | tail -12) | tee "$out/pcg-test.log"
scripts/bench-gpu.sh "$out/jacobi" > "$out/bench-gpu.log" 2>&1; tail -8 "$out/bench-gpu.log"
scripts/bench-library.sh cuda poisson7:200 poisson7:100 "$out/library" > "$out/bench-library.log" 2>&1
grep -E "right-hand sides|Update/|set-up on" "$out/bench-library.log"
if [ "${AFSAI:-0}" = 1 ]; then
  scripts/bench-afsai-gpu.sh "$out/afsai" > "$out/bench-afsai.log" 2>&1; tail -14 "$out/bench-afsai.log"
  bin/fsai-scale strong -ranks 1,2 -problem poisson7:256 -out "$out/strong" -- -backend cuda -prec afsai > "$out/strong.log" 2>&1
  bin/fsai-scale weak -ranks 1,2 -rows-per-rank 8000000 -family poisson7 -out "$out/weak" -- -backend cuda -prec afsai > "$out/weak.log" 2>&1
  cat "$out/strong/scaling.csv" "$out/weak/scaling.csv"
fi
