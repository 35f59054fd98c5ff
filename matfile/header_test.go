package matfile

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestReadHeaders checks what the header readers return for files of both
// formats, that claims beyond a file's length are cut to it, and that a
// header the readers refuse before allocating is refused, collectively.
func TestReadHeaders(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		dir := sharedDir(t, c)
		data := "1 1 4\n2 2 5\n3 3 6\n3 1 -1\n" // 25 bytes: room for 6 lines of 4
		writeFiles(t, c, dir, map[string]string{
			"general.mtx":   "%%MatrixMarket matrix coordinate real general\n3 3 4\n" + data,
			"symmetric.mtx": "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n3 3 4\n" + data,
			"claims.mtx":    "%%MatrixMarket matrix coordinate real general\n3 3 9000000000\n" + data,
			"rows.mtx":      "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 4\n" + data,
			"good.petsc":    string(petscBytes(1211216, 3, 3, 4, []int32{1, 1, 2}, []int32{0, 1, 0, 2}, []float64{4, 5, -1, 6})),
			"many.petsc":    string(petscBytes(1211216, 3, 3, math.MaxInt32, []int32{1, 1, 2}, []int32{0, 1, 0, 2}, []float64{4, 5, -1, 6})),
			"rows.petsc":    string(petscBytes(1211216, 2000000000, 2000000000, 4, []int32{1, 1, 2}, []int32{0, 1, 0, 2}, []float64{4, 5, -1, 6})),
			"two.vec":       "%%MatrixMarket matrix array real general\n3 2\n1\n2\n3\n4\n5\n6\n",
			"claims.vec":    "%%MatrixMarket matrix array real general\n3 1000000000\n1\n2\n3\n4\n5\n6\n",
		})
		for name, want := range map[string]MatrixHeader{
			"general.mtx":   {N: 3, NNZ: 4},
			"symmetric.mtx": {N: 3, NNZ: 4, Symmetric: true},
			"claims.mtx":    {N: 3, NNZ: 6},
			"good.petsc":    {N: 3, NNZ: 4, PETSc: true},
			"many.petsc":    {N: 3, NNZ: 4, PETSc: true},
		} {
			got, err := ReadMatrixHeader(c, filepath.Join(dir, name))
			if err != nil || got != want {
				t.Errorf("%s: header %+v, %v; want %+v", name, got, err, want)
			}
		}
		_, err := ReadMatrixHeader(c, filepath.Join(dir, "rows.mtx"))
		mpitest.CheckCollectiveError(t, c, "rows.mtx", err, "line 2: size line declares 2000000000 rows but 4 entries")
		_, err = ReadMatrixHeader(c, filepath.Join(dir, "rows.petsc"))
		mpitest.CheckCollectiveError(t, c, "rows.petsc", err, "rows.petsc: truncated")
		_, err = ReadMatrixHeader(c, filepath.Join(dir, "two.vec"))
		mpitest.CheckCollectiveError(t, c, "two.vec", err, "array format holds a dense matrix")

		for name, want := range map[string][2]int64{"two.vec": {3, 2}, "claims.vec": {3, 2}} {
			n, k, err := ReadVectorsHeader(c, filepath.Join(dir, name))
			if err != nil || n != want[0] || k != want[1] {
				t.Errorf("%s: %d x %d, %v; want %d x %d", name, n, k, err, want[0], want[1])
			}
		}
		_, _, err = ReadVectorsHeader(c, filepath.Join(dir, "general.mtx"))
		mpitest.CheckCollectiveError(t, c, "general.mtx", err, "coordinate general file is not a vector")
	})
}
