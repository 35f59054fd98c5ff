#!/usr/bin/env bash
# Input speed per rank: generating a built-in problem (rows per second), and
# reading the same matrix from a Matrix Market file and from a PETSc binary
# file (MB of file per second per rank), each from the report's input_s (the
# slowest rank's time to read or generate its rows, route them and assemble
# its stripe; read_s adds the start-up and the matrix checks). Each file is
# read twice and the second read counts: it measures parsing and assembly
# from the page cache, not the disk.
#
#   scripts/bench-input.sh [problem] [ranks] [outdir]
#     (default diffusion:128 1 $OUT or out/bench-input)
#
# Where there is no Go (the GPU machine) it uses bin/fsai-dist and bin/mtxgen;
# build them first with
#   go build -o bin/fsai-dist ./cmd/fsai-dist && go build -o bin/mtxgen ./scripts/mtxgen
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
problem=${1:-diffusion:128}
np=${2:-1}
out=${3:-${OUT:-out/bench-input}}
mkdir -p "$out"
if command -v go >/dev/null; then
  go build -o bin/fsai-dist ./cmd/fsai-dist
  go build -o bin/mtxgen ./scripts/mtxgen
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run() { # name, then the input flags
  name=$1
  shift
  mpirun -np "$np" --bind-to none bin/fsai-dist -backend cpu -prec jacobi -maxit 1 -progress 0 \
    -report "$out/$name.json" "$@" >/dev/null 2>&1 || [ $? -eq 3 ]
}
run generate -problem "$problem"
run write -problem "$problem" -write-matrix "$work/a.petsc"
bin/mtxgen -problem "$problem" -out "$work/a.mtx"
for i in 1 2; do
  run mtx -matrix "$work/a.mtx"
  run petsc -matrix "$work/a.petsc"
done
python3 - "$out" "$problem" "$np" "$(stat -c %s "$work/a.mtx")" "$(stat -c %s "$work/a.petsc")" <<'PY'
import json, os, sys
out, problem, np, mtx, petsc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
r = {k: json.load(open(os.path.join(out, k + ".json"))) for k in ("generate", "mtx", "petsc")}
n = r["generate"]["n"]
print(f"{problem}: {n} rows, {r['generate']['nnz']} nonzeros, {np} rank(s), {os.cpu_count()} cores")
print(f"{'input':<10} {'input_s':>8} {'per rank':>22}")
t = r["generate"]["input_s"]
print(f"{'generate':<10} {t:>8.3f} {n / np / t / 1e6:>14.1f} M rows/s")
for k, size in (("mtx", mtx), ("petsc", petsc)):
    t = r[k]["input_s"]
    print(f"{k:<10} {t:>8.3f} {size / np / t / 1e6:>14.1f} MB/s  ({size / 1e6:.0f} MB file)")
PY
