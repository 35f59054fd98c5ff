#!/usr/bin/env bash
# Runs the whole test suite: the check of the tracked tree (check-tree.sh),
# unit tests, multi-rank tests under mpirun (1 to 4 ranks, launched by the
# tests themselves), the CLI end to end, and the NVRTC compilation of every
# CUDA kernel. GPU tests skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# docs, scripts and comments describe the software as it is; the tree stays small
scripts/check-tree.sh --self-test
scripts/check-tree.sh
scripts/deps.sh --tests
. scripts/env.sh
go vet ./...
go test -count=1 -timeout 20m ./...
# Fuzz the readers and the problem-spec parser for a bounded number of
# inputs each (about 10 s on 2 cores); the seed corpus is in testdata/fuzz,
# and go test above already ran it. A failing input is saved there: commit
# it with the fix. Counts, not durations: Go 1.26's fuzzing coordinator can
# report a spurious "context deadline exceeded" at the end of a -fuzztime
# duration on a loaded machine (golang/go#75804, fixed in Go 1.27).
go test -run '^$' -fuzz '^FuzzReadMTX$' -fuzztime 150000x ./matfile
go test -run '^$' -fuzz '^FuzzReadPETSc$' -fuzztime 300000x ./matfile
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 300000x ./problem
