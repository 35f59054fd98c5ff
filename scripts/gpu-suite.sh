#!/usr/bin/env bash
# The GPU tests, the GPU benchmarks and the scaling studies in one go, on a
# GPU machine with the binaries built elsewhere (bin/). Everything they write
# is packed into OUT/gpu-suite.tgz (OUT: the environment's OUT, else the
# current folder): scripts/gpu-suite.sh [part ...], parts (default all but large)
#   tests    the GPU tests (gpu.test, cudafsai.test, pcg.test -test.run OnGPU)
#   jacobi   SpMV and PCG-Jacobi against the copy bandwidth and CuPy, with two
#            GPUs the scaling and the hidden halo (scripts/bench-gpu.sh)
#   library  several right-hand sides and UpdateValues (scripts/bench-library.sh)
#   afsai    aFSAI on diffusion:200: one and two GPUs, mixed precision, the
#            CPU set-up, CuPy (scripts/bench-afsai-gpu.sh)
#   scaling  strong scaling on poisson7:256 with Jacobi and aFSAI, weak with
#            aFSAI (cmd/fsai-scale: CSV and PNG plots)
#   nonsym   BiCGSTAB and GMRES(30) with Jacobi against CuPy's gmres on one
#            GPU (scripts/bench-nonsym-gpu.sh), and their strong scaling on
#            convdiff:256 on every GPU of the node (300 iterations each)
#   input    generating, and reading Matrix Market and PETSc binary files, on
#            one rank (scripts/bench-input.sh diffusion:160)
#   large    on every GPU of the node (1, 2, 4, 8): aFSAI strong scaling
#            on diffusion:320 and poisson7:400, weak scaling at the blueprint's
#            1,771,561 rows per GPU with halos device to device and through the
#            host (not in the default list)
#
# Build first, where Go is installed:
#   go build -o bin/fsai-dist ./cmd/fsai-dist && go build -o bin/fsai-scale ./cmd/fsai-scale &&
#   go build -o bin/mtxgen ./scripts/mtxgen &&
#   for p in gpu afsai/cudafsai pcg solver; do go test -c -o bin/$(basename $p).test ./$p; done
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
parts=${*:-tests jacobi library afsai scaling nonsym input}
want() { [[ " $parts " == *" $1 "* ]]; }
# work in a temporary folder and pack it into one archive at the end
out=$(mktemp -d)
trap 'tar czf "${OUT:-.}/gpu-suite.tgz" -C "$out" .' EXIT
if want tests; then
  (cd gpu && ../bin/gpu.test -test.v 2>&1 | grep -E '^(--- FAIL|FAIL|ok|PASS|panic)|_test.go:' | tail -20) | tee "$out/gpu-test.log"
  (cd afsai/cudafsai && ../../bin/cudafsai.test -test.v 2>&1 | grep -E '^(--- FAIL|FAIL|ok|PASS|panic)|_test.go:' | tail -20) | tee "$out/cudafsai-test.log"
  (cd pcg && ../bin/pcg.test -test.run 'OnGPU' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)' | tail -6) | tee "$out/pcg-test.log"
fi
if want jacobi; then
  scripts/bench-gpu.sh "$out/jacobi" > "$out/bench-gpu.log" 2>&1; tail -8 "$out/bench-gpu.log"
fi
if want library; then
  for p in 100 128; do
    scripts/bench-library.sh cuda poisson7:200 poisson7:$p "$out/library-$p" > "$out/bench-library-$p.log" 2>&1
    grep -hE "right-hand sides|Update/|last Update|set-up on" "$out/bench-library-$p.log"
  done
fi
if want afsai; then
  scripts/bench-afsai-gpu.sh "$out/afsai" > "$out/bench-afsai.log" 2>&1; tail -16 "$out/bench-afsai.log"
fi
if want scaling; then
  for prec in jacobi afsai; do
    bin/fsai-scale strong -ranks 1,2 -problem poisson7:256 -out "$out/strong-$prec" -- -backend cuda -prec $prec > "$out/strong-$prec.log" 2>&1
    cat "$out/strong-$prec/scaling.csv"
  done
  bin/fsai-scale weak -ranks 1,2 -rows-per-rank 8000000 -family poisson7 -out "$out/weak" -- -backend cuda -prec afsai > "$out/weak.log" 2>&1
  cat "$out/weak/scaling.csv"
fi
gpu_ranks() { # 1,2,4,8 up to the GPUs there are
  local gpus r ranks=1
  gpus=$(nvidia-smi -L | wc -l)
  for ((r = 2; r <= gpus; r *= 2)); do ranks+=",$r"; done
  echo "$ranks"
}
if want nonsym; then
  scripts/bench-nonsym-gpu.sh convdiff:200 300 "$out/nonsym" > "$out/bench-nonsym-gpu.log" 2>&1; tail -8 "$out/bench-nonsym-gpu.log"
  for m in bicgstab gmres; do
    bin/fsai-scale strong -warmup -ranks "$(gpu_ranks)" -problem convdiff:256 -out "$out/strong-$m" -- \
      -backend cuda -solver $m -prec jacobi -tol 1e-30 -maxit 300 > "$out/strong-$m.log" 2>&1
    cut -d, -f1,2,7,11,15 "$out/strong-$m/scaling.csv"   # ranks, problem, iterations, iter_s, efficiency_iter
  done
fi
if want input; then
  scripts/bench-input.sh diffusion:160 1 "$out/input" 2>&1 | tail -5
fi
if want large; then
  ranks=$(gpu_ranks)
  for p in diffusion:320 poisson7:400; do
    bin/fsai-scale strong -warmup -ranks "$ranks" -problem $p -out "$out/strong-${p/:/}" -- -backend cuda -prec afsai > "$out/strong-${p/:/}.log" 2>&1
    cat "$out/strong-${p/:/}/scaling.csv"
  done
  for halos in device host; do
    bin/fsai-scale weak -warmup -ranks "$ranks" -rows-per-rank 1771561 -family poisson7 -out "$out/weak-1771561-$halos" -- \
      -backend cuda -prec afsai -gpu.host-halos=$([ $halos = host ] && echo true || echo false) > "$out/weak-1771561-$halos.log" 2>&1
    cat "$out/weak-1771561-$halos/scaling.csv"
  done
fi
