#!/usr/bin/env bash
# Everything the GPU machine runs in one lease (carry bin/): the GPU tests,
# the Jacobi and aFSAI benchmarks and the scaling studies, packed into
# $OUT/gpu-session.tgz.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
# $OUT brings back only a few files: work in a folder and pack it at the end
out=$(mktemp -d)
trap 'tar czf "${OUT:-.}/gpu-session.tgz" -C "$out" .' EXIT
(cd gpu && ../bin/gpu.test -test.run 'SpMV|UpdateXR|Dot|Gather|FSAI|AdaptiveSetup|KernelsCompile' 2>&1 | tail -3)
(cd pcg && ../bin/pcg.test -test.run TestPCGOnGPU 2>&1 | tail -2)
scripts/bench-gpu.sh "$out/jacobi" > "$out/bench-gpu.log" 2>&1; tail -8 "$out/bench-gpu.log"
scripts/bench-afsai-gpu.sh "$out/afsai" > "$out/bench-afsai.log" 2>&1; tail -14 "$out/bench-afsai.log"
bin/fsai-scale strong -ranks 1,2 -problem poisson7:256 -out "$out/strong" -- -backend cuda -prec afsai > "$out/strong.log" 2>&1
bin/fsai-scale weak -ranks 1,2 -rows-per-rank 8000000 -family poisson7 -out "$out/weak" -- -backend cuda -prec afsai > "$out/weak.log" 2>&1
cat "$out/strong/scaling.csv" "$out/weak/scaling.csv"
