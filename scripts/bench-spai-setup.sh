#!/usr/bin/env bash
# Times the SPAI set-up (-prec spai, BiCGSTAB) three ways on one problem
# (default convdiff:216:100, 10.1M rows), in one run, the variants taken in
# turn and repeated (default 3 times, the fastest kept):
#   gpu  -backend cuda -spai.device   M's rows built and solved on the GPU
#   host -backend cuda                M's rows on the host's cores, M bound to the GPU
#   cpu  -backend cpu                 the CPU backend on all the host's cores
# Each run stops after one iteration (-maxit 1: exit status 3, expected);
# the set-up is the report's prec_setup_s, with prec_info's gather_s,
# compute_s and upload_s, and then their parts: of gather_s own_s (the own
# rows copied) and check_s; of compute_s on the GPU pattern_s, system_s,
# to_device_s, count_s, kernel_s, from_device_s and assemble_s;
# of upload_s split_s and bind_s.
#
# Build here first (the GPU machine has no Go), then carry bin/:
#   go build -o bin/fsai-dist ./cmd/fsai-dist
# then run there: scripts/bench-spai-setup.sh [problem] [repeats] [outdir]
#   (default convdiff:216:100 3 $OUT or out/bench-spai-setup)
# Writes outdir/<variant>-<repeat>.json and summary.json, and prints the table.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
problem=${1:-convdiff:216:100}
repeats=${2:-3}
out=${3:-${OUT:-out/bench-spai-setup}}
mkdir -p "$out"
nvidia-smi -L
nproc

run() {
  name=$1
  shift
  bin/fsai-dist -problem "$problem" -solver bicgstab -prec spai -maxit 1 -progress 0 \
    -report "$out/$name.json" "$@" 2>&1 | tail -1
}
for r in $(seq "$repeats"); do
  run "gpu-$r" -backend cuda -spai.device
  run "host-$r" -backend cuda
  run "cpu-$r" -backend cpu
done

python3 - "$out" "$problem" "$repeats" <<'PY'
import json, os, sys
out, problem, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
summary = {"problem": problem, "variants": {}}
print(f"{problem}: SPAI set-up, fastest of {repeats}")
print(f"{'variant':8} {'prec_setup_s':>12} {'gather_s':>9} {'compute_s':>9} {'upload_s':>9} {'device':>7} {'batches':>7} {'largest block':>13}")
for v in ("gpu", "host", "cpu"):
    runs = []
    for r in range(1, repeats + 1):
        p = os.path.join(out, f"{v}-{r}.json")
        if os.path.exists(p):
            runs.append(json.load(open(p)))
    runs = [r for r in runs if "prec_setup_s" in r]
    if not runs:
        print(f"{v:8} no result")
        continue
    best = min(runs, key=lambda r: r["prec_setup_s"])
    i = best.get("prec_info", {})
    summary["variants"][v] = {"prec_setup_s": [r["prec_setup_s"] for r in runs], "best": best}
    print(f"{v:8} {best['prec_setup_s']:>12.3f} {i.get('gather_s', 0):>9.3f} {i.get('compute_s', 0):>9.3f} "
          f"{i.get('upload_s', 0):>9.3f} {i.get('setup_device', ''):>7} {i.get('batches', 0):>7} "
          f"{str(i.get('max_block_rows', '')) + ' x ' + str(i.get('max_block_cols', '')):>13}")
stages = ("own_s", "check_s", "pattern_s", "system_s", "to_device_s", "count_s", "kernel_s", "from_device_s",
          "assemble_s", "split_s", "bind_s")
print()
print(f"{'variant':8} " + " ".join(f"{st:>13}" for st in stages))
for v, r in summary["variants"].items():
    i = r["best"].get("prec_info", {})
    print(f"{v:8} " + " ".join(f"{i.get(st, 0):>13.3f}" for st in stages))
s = summary["variants"]
if "gpu" in s and "cpu" in s:
    print(f"cpu / gpu set-up: {s['cpu']['best']['prec_setup_s'] / s['gpu']['best']['prec_setup_s']:.2f}x")
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
PY
