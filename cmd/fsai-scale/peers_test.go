package main

import (
	"os"
	"path/filepath"
	"testing"
)

// stubPeer stands in for petsc_cg and cupy_cg.py: it checks the arguments
// a peer gets (a matrix file written by fsai-dist, the tolerance, the
// iteration limit, the JSON path) and writes a result on rank 0 only.
const stubPeer = `#!/bin/sh
[ "$1" = -matrix ] && [ -s "$2" ] && [ "$3" = -tol ] && [ "$4" = 1e-06 ] && [ "$5" = -maxit ] &&
  [ "$6" = 500 ] && [ "$7" = -json ] || { echo "stub: bad arguments: $*" >&2; exit 1; }
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
echo '{"peer":"stub","n":216,"nnz":1296,"iterations":7,"converged":true,"relres":1e-9,"time_per_iter_s":0.002}' > "$8"
`

// peers on a problem the peers cannot generate: the first fsai-dist run
// writes the matrix, both peers read it, and the CSV holds one row per
// peer run with the ratio of times per iteration.
func TestPeers(t *testing.T) {
	needMPI(t)
	out := t.TempDir()
	stub := filepath.Join(t.TempDir(), "petsc_cg")
	if err := os.WriteFile(stub, []byte(stubPeer), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := scale(t, "peers", "-ranks", "1,2", "-problem", "diffusion:6", "-tol", "1e-6", "-maxit", "500",
		"-peers", "petsc,cupy", "-petsc", stub, "-python", "/bin/sh", "-cupy", stub,
		"-bin", fsaiDist, "-out", out, "--", "-backend", "cpu", "-threads", "1")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	_, rows := readCSV(t, filepath.Join(out, "peers.csv"))
	want := []struct{ peer, peerRanks, fsaiRanks string }{{"petsc", "1", "1"}, {"petsc", "2", "2"}, {"cupy", "1", "1"}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		row := rows[i]
		if row["peer"] != w.peer || row["peer_ranks"] != w.peerRanks || row["fsai_ranks"] != w.fsaiRanks ||
			row["problem"] != "diffusion:6" || row["peer_iterations"] != "7" || row["reason"] != "" {
			t.Errorf("row %d: %v", i, row)
		}
		if r := float(t, row, "ratio"); !near(r, 0.002/float(t, row, "fsai_iter_s")) {
			t.Errorf("row %d: ratio %g is not peer_iter_s/fsai_iter_s", i, r)
		}
	}
}
