package matfile

import (
	"path/filepath"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// TestReadMatrixDetects checks that the format is told by content: a PETSc
// file named .mtx and a Matrix Market file named .bin both read, and other
// content fails on every rank.
func TestReadMatrixDetects(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		dir := sharedDir(t, c)
		mtx := "%%matrixmarket matrix coordinate real general\n3 3 4\n1 1 4\n2 2 5\n3 3 6\n3 1 -1\n"
		ref := refMatrix{n: 3, rows: []map[int64]float64{{0: 4}, {1: 5}, {0: -1, 2: 6}}}
		writeFiles(t, c, dir, map[string]string{
			"mm.bin":    mtx,
			"petsc.mtx": string(petscBytes(1211216, 3, 3, 4, []int32{1, 1, 2}, []int32{0, 1, 0, 2}, []float64{4, 5, -1, 6})),
			"junk.mtx":  "% not a banner\n3 3 1\n1 1 1\n",
			"int64.mtx": string(petscBytes(0, 1211216, 0, 3, nil, nil, nil)),
			"tiny.mtx":  "%%",
			"empty.mtx": "",
		})
		for _, name := range []string{"mm.bin", "petsc.mtx"} {
			r, part, err := ReadMatrix(c, filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkStripe(t, name, c, ref, r, part)
		}
		for _, name := range []string{"junk.mtx", "tiny.mtx", "empty.mtx"} {
			_, _, err := ReadMatrix(c, filepath.Join(dir, name))
			mpitest.CheckCollectiveError(t, c, name, err, "read "+filepath.Join(dir, name)+": unknown format: neither a PETSc binary matrix")
		}
		_, _, err := ReadMatrix(c, filepath.Join(dir, "int64.mtx"))
		mpitest.CheckCollectiveError(t, c, "int64.mtx", err, "PETSc file with 64-bit indices not supported")
		_, _, err = ReadMatrix(c, filepath.Join(dir, "missing"))
		mpitest.CheckCollectiveError(t, c, "missing", err, "no such file")
	})
}
