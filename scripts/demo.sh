#!/usr/bin/env bash
# Builds fsai-dist and solves the default problem (poisson7:64, 262,144 rows)
# on 2 ranks, writing the report to out/report.json.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
. scripts/env.sh
go build -o bin/fsai-dist ./cmd/fsai-dist
mkdir -p out
mpirun -np 2 --bind-to none bin/fsai-dist -report out/report.json "$@"
echo "report: out/report.json"
