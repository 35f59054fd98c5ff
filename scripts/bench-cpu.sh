#!/usr/bin/env bash
# CPU benchmark against PETSc and against the machine's memory bandwidth:
# distributed SpMV bandwidth and PCG-Jacobi time per iteration, fsai-dist and
# PETSc's CG+Jacobi on the same matrix in the same run, on each rank count of
# RANKS (default "1 2"), one thread per rank, 100 iterations each, and a
# STREAM-like copy and triad (BenchmarkStream in cpu/, float64 arrays of 128
# MiB) run by as many single-thread processes as ranks, each bound to its own
# core as the ranks are, their bandwidths added: each SpMV's bandwidth is also
# given as a fraction of the copy's, and so are PCG's fused vector steps'
# (BenchmarkPCGSteps, vectors of 2^24 entries) in a second table.
# Each run is repeated (default 3) and the fastest repeat counts, as the
# machine may be shared with other work.
# Usage: [RANKS="1 4 16"] scripts/bench-cpu.sh [problem] [iterations] [outdir] [repeats]
#   (default poisson7:128 100 $OUT or out/bench-cpu, which git ignores, 3)
# Where Go is installed the script builds bin/fsai-dist, bin/cpu.test and the
# PETSc peer first; elsewhere (a GPU node's host) it runs those built before.
# Writes outdir/*.json and outdir/stream.txt and prints a table with the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v go >/dev/null; then
  scripts/deps.sh --peers
fi
. scripts/env.sh
problem=${1:-poisson7:128}
iters=${2:-100}
out=${3:-${OUT:-out/bench-cpu}}
reps=${4:-3}
ranks=${RANKS:-1 2}
mkdir -p "$out"
out=$(cd "$out" && pwd) # the stream runs write from cpu/
if command -v go >/dev/null; then
  go build -o bin/fsai-dist ./cmd/fsai-dist
  go test -c -o bin/cpu.test ./cpu
  scripts/peers/build.sh bin/peers >/dev/null
fi

# stream K: BenchmarkStream and BenchmarkPCGSteps in K processes at once, one
# thread each, process k bound to core k (taskset, where there is one), as
# mpirun --bind-to core places K ranks; one line per kernel with the sum of
# the K bandwidths, in the benchmark's format with K as the thread count.
stream() {
  local k=$1 i pin=() pids=()
  for ((i = 0; i < k; i++)); do
    if command -v taskset >/dev/null; then pin=(taskset -c "$i"); fi
    (cd cpu && "${pin[@]}" ../bin/cpu.test -test.run '^$' -test.bench '^Benchmark(Stream|PCGSteps)$' \
      -test.benchtime 20x -test.cpu 1 >"$out/stream-$k-$i.txt") &
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$out"/stream-"$k"-*.txt | python3 -c '
import re, sys
k, total = sys.argv[1], {}
for line in sys.stdin:
    m = re.match(r"Benchmark(Stream|PCGSteps)/(\w+)\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s", line)
    if m:
        total[(m[1], m[2])] = total.get((m[1], m[2]), 0) + float(m[3])
for (b, kernel), mbs in total.items():
    print(f"Benchmark{b}/{kernel}-{k} 20 1 ns/op {mbs:.2f} MB/s")' "$k"
  rm -f "$out"/stream-"$k"-*.txt
}

rm -f "$out"/fsai-np*-*.json "$out"/petsc-np*-*.json "$out"/stream.txt # earlier repeats
for rep in $(seq "$reps"); do
  for np in $ranks; do
    # exactly $iters iterations: a tolerance that is never reached (exit 3 expected)
    mpirun -np $np --bind-to core bin/fsai-dist -problem "$problem" -backend cpu -prec jacobi \
      -threads 1 -tol 1e-30 -maxit "$iters" -bench-spmv 100 -progress 0 \
      -report "$out/fsai-np$np-$rep.json" 2>/dev/null || [ $? -eq 3 ]
    mpirun -np $np --bind-to core bin/peers/petsc_cg -problem "$problem" -fixed-iters "$iters" \
      -json "$out/petsc-np$np-$rep.json" >/dev/null
    stream "$np" >>"$out/stream.txt"
  done
done

python3 - "$out" $ranks <<'PY'
import glob, json, re, sys
out = sys.argv[1]
ranks = [int(r) for r in sys.argv[2:]]

def fastest(name, key):
    """The repeat of run name with the smallest key."""
    return min((json.load(open(p)) for p in glob.glob(f"{out}/{name}-*.json")), key=lambda r: r[key])

# BenchmarkStream/copy-2  20  7478581 ns/op  35893.90 MB/s: the best repeat per kernel and thread count
stream = {}
for line in open(f"{out}/stream.txt"):
    m = re.match(r"Benchmark(?:Stream|PCGSteps)/(\w+)(?:-(\d+))?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s", line)
    if m:
        key = (m[1], int(m[2] or 1))
        stream[key] = max(stream.get(key, 0), float(m[3]) / 1e3)

print(f"{'ranks':>5} {'copy GB/s':>9} {'triad GB/s':>10} {'fsai SpMV GB/s':>15} {'of copy':>7} {'PETSc SpMV GB/s':>16} {'of copy':>7} {'fsai/PETSc':>10} {'fsai ms/it':>11} {'PETSc ms/it':>12} {'PETSc/fsai':>10}")
for np in ranks:
    fs, ps = fastest(f"fsai-np{np}", "spmv_s"), fastest(f"petsc-np{np}", "spmv_s")
    fi, pi = fastest(f"fsai-np{np}", "iter_s"), fastest(f"petsc-np{np}", "time_per_iter_s")
    copy, triad = stream[("copy", np)], stream[("triad", np)]
    fit, pit = fi["iter_s"] * 1e3, pi["time_per_iter_s"] * 1e3
    print(f"{np:>5} {copy:>9.2f} {triad:>10.2f} {fs['spmv_gbs']:>15.2f} {fs['spmv_gbs']/copy:>7.2f} {ps['spmv_gbs']:>16.2f} {ps['spmv_gbs']/copy:>7.2f} "
          f"{fs['spmv_gbs']/ps['spmv_gbs']:>10.2f} {fit:>11.3f} {pit:>12.3f} {pit/fit:>10.2f}")

print()
print(f"{'threads':>7} {'kernel':>13} {'GB/s':>7} {'of copy':>7}")
for np in ranks:
    for k in ("triad", "UpdateRZCols", "UpdateXPCols"):
        print(f"{np:>7} {k:>13} {stream[(k, np)]:>7.2f} {stream[(k, np)]/stream[('copy', np)]:>7.2f}")
PY
