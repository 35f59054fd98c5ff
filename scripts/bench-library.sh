#!/usr/bin/env bash
# Benchmarks of the library's reuse paths on one backend, with the
# solver package's benchmarks: 8 right-hand sides together against 8 solves
# (BenchmarkManyRHS, Jacobi and aFSAI) and UpdateValues against a full
# set-up (BenchmarkUpdate).
#
# Build here first: go test -c -o bin/solver.test ./solver
# then: scripts/bench-library.sh [backend] [rhs-problem] [update-problem] [outdir]
#   (defaults: cuda poisson7:200 poisson7:100 $OUT or out/bench-library)
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
backend=${1:-cuda} rhs=${2:-poisson7:200} update=${3:-poisson7:100}
out=${4:-${OUT:-out/bench-library}}
mkdir -p "$out"
bench() { (cd solver && ../bin/solver.test -test.run '^$' -test.benchtime 1x -solver.backend "$backend" "$@"); }
for prec in jacobi afsai; do
  bench -test.bench ManyRHS -solver.problem "$rhs" -solver.prec "$prec" | tee -a "$out/many-rhs.txt"
done
bench -test.bench Update -test.benchtime 3x -solver.problem "$update" -solver.prec afsai | tee -a "$out/update.txt"
