#!/usr/bin/env bash
# Builds fsai-dist and fsai-scale (or, where there is no Go, as on the GPU machine, uses the
# ones in bin/) and runs a strong and a weak scaling study, each writing a
# CSV, PNG plots and runs/ (every run's report and log) under DIR/strong and DIR/weak.
# The defaults fit a 2-core CPU machine (CI):
#
#   scripts/scale.sh                  # ranks 1,2; strong poisson7:24; weak 8000 rows per rank; CPU
#   scripts/scale.sh -r 1,2 -s poisson7:256 -w 8000000 -o out/gpu -- -backend cuda -prec afsai
#
#   -o DIR     output directory (out/scale)
#   -r RANKS   rank counts (1,2)
#   -s SPEC    strong-scaling problem (poisson7:24)
#   -w ROWS    weak scaling: rows per rank (8000)
#   -f FAMILY  weak scaling: poisson7, poisson27, diffusion, aniso or convdiff (poisson7)
#   -l NAME    launcher: mpirun or srun (mpirun)
#   -- ARGS    fsai-dist flags for every run (default: -backend cpu -threads 1, one core per rank)
#
# Exit status: the larger of the two studies' (0 every run converged; 3 some run failed or did
# not converge, see the reason column of the CSV; 2 or 1 a study could not run).
set -uo pipefail
cd "$(dirname "$0")/.."

out=out/scale ranks=1,2 strong=poisson7:24 rows=8000 family=poisson7 launcher=mpirun
while getopts "o:r:s:w:f:l:" opt; do
  case $opt in
    o) out=$OPTARG ;;
    r) ranks=$OPTARG ;;
    s) strong=$OPTARG ;;
    w) rows=$OPTARG ;;
    f) family=$OPTARG ;;
    l) launcher=$OPTARG ;;
    *) sed -n '2,18p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
fsai=("$@")
[ ${#fsai[@]} -gt 0 ] || fsai=(-backend cpu -threads 1)

set -e
. scripts/env.sh
if command -v go >/dev/null; then
  scripts/deps.sh
  go build -o bin/fsai-dist ./cmd/fsai-dist
  go build -o bin/fsai-scale ./cmd/fsai-scale
elif [ ! -x bin/fsai-dist ] || [ ! -x bin/fsai-scale ]; then
  # a GPU machine without Go: the binaries come built from elsewhere
  echo "scale.sh: no Go here: build bin/fsai-dist and bin/fsai-scale on another machine and bring them" >&2
  exit 2
fi
set +e

common=(-launcher "$launcher" -ranks "$ranks" -bin bin/fsai-dist)
bin/fsai-scale strong "${common[@]}" -problem "$strong" -out "$out/strong" -- "${fsai[@]}"
s=$?
bin/fsai-scale weak "${common[@]}" -family "$family" -rows-per-rank "$rows" -out "$out/weak" -- "${fsai[@]}"
w=$?
exit $(( s > w ? s : w ))
