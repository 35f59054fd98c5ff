#!/usr/bin/env bash
# Set-up plus solve of aFSAI settings against Jacobi on one problem, in CPU
# seconds of one rank with one thread, on a machine that others may share.
#
#   scripts/bench-afsai-time.sh PROBLEM [REPEATS] [CONFIG]...
#
# A CONFIG is "name flags...", e.g. "stall1e-2 -prec afsai -afsai.stall 1e-2";
# without any the script compares Jacobi, the aFSAI defaults and -afsai.stall
# 1e-2 and 3e-2. Each configuration runs REPEATS times (default 2) in full and
# REPEATS times stopped after one iteration (-maxit 1), as one process
# (bin/fsai-dist without mpirun, one rank, -threads 1); each time is the
# least over the repeats of the user plus system CPU seconds, which other
# processes on the machine inflate far less than wall-clock seconds. The
# solve is the full run's CPU time less the one-iteration run's, over the
# iterations less one, times the iterations; the set-up is the one-iteration
# run's CPU time less Jacobi's (generation, binding and one iteration are
# common to both). The table has the iterations, nnz(G)/nnz(A), set-up,
# solve, their sum, the sum over Jacobi's solve, and the cost of an
# iteration over Jacobi's.
#
# Environment: OUT (default out/bench-afsai-time); FLAGS, flags added to
# every run (FLAGS=-random-rhs on elasticity, whose default b = A*1 is a
# rigid translation that the coarse space solves in one iteration).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
if (($# < 1)); then
	echo "usage: scripts/bench-afsai-time.sh PROBLEM [REPEATS] [CONFIG]..." >&2
	exit 2
fi
problem=$1
repeats=${2:-2}
shift $(($# < 2 ? $# : 2))
configs=("$@")
if ((${#configs[@]} == 0)); then
	configs=("default -prec afsai" "stall1e-2 -prec afsai -afsai.stall 1e-2" "stall3e-2 -prec afsai -afsai.stall 3e-2")
fi
configs=("jacobi -prec jacobi" "${configs[@]}")
out=${OUT:-out/bench-afsai-time}/${problem//:/_}
go build -o bin/fsai-dist ./cmd/fsai-dist || exit 1
rm -rf "$out"
mkdir -p "$out"

TIMEFORMAT='%U %S'
for ((k = 1; k <= repeats; k++)); do
	for config in "${configs[@]}"; do
		read -r name flags <<<"$config"
		for mode in full one; do
			extra=()
			[[ $mode == one ]] && extra=(-maxit 1)
			# shellcheck disable=SC2086 # flags and FLAGS are words
			{ time bin/fsai-dist -problem "$problem" -threads 1 -report "$out/$name.$mode.$k.json" $flags ${FLAGS:-} "${extra[@]}" \
				</dev/null >"$out/$name.$mode.log" 2>&1; } 2>"$out/$name.$mode.$k.cpu"
		done
		[[ -s $out/$name.full.$k.json ]] || { echo "$name: no report; see $out/$name.full.log" >&2; exit 1; }
	done
done

python3 - "$out" "${configs[@]%% *}" <<'PY'
import glob, json, sys

out, names = sys.argv[1], sys.argv[2:]

def least_cpu(name, mode):
    times = []
    for f in glob.glob(f"{out}/{name}.{mode}.*.cpu"):
        user, system = open(f).read().split()[-2:]
        times.append(float(user) + float(system))
    return min(times)

runs = {}
for name in names:
    report = json.load(open(f"{out}/{name}.full.1.json"))
    runs[name] = (report, least_cpu(name, "full"), least_cpu(name, "one"))
jacobi, jfull, jone = runs["jacobi"]
jit = (jfull - jone) / max(jacobi["iterations"] - 1, 1)
jsolve = jit * jacobi["iterations"]
print(f"{report['problem']}, one rank, one thread, CPU seconds (least of {len(glob.glob(out + '/jacobi.full.*.cpu'))})")
print("| setting | iterations | density | set-up | solve | set-up + solve | over Jacobi | iteration over Jacobi's |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for name, (r, full, one) in runs.items():
    its = r["iterations"]
    it = jit if name == "jacobi" else (full - one) / max(its - 1, 1)
    setup = 0.0 if name == "jacobi" else max(one - jone, 0.0)
    solve = it * its
    print(f"| {name} | {its} | {r.get('prec_density', 0):.3f} | {setup:.3f} | {solve:.3f} | {setup + solve:.3f} | {(setup + solve) / jsolve:.2f} | {it / jit:.2f} |")
PY
