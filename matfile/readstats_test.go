package matfile

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestReadMatrixStats: repeated entries are summed and counted, in both
// formats and whichever ranks parse them.
func TestReadMatrixStats(t *testing.T) {
	files := map[string]string{
		// (1,1) three times, (3,2) twice
		"general.mtx": "%%MatrixMarket matrix coordinate real general\n3 3 6\n1 1 1\n3 2 5\n1 1 2\n2 2 1\n3 2 1\n1 1 4\n",
		// (2,1) twice: both triangles hold a repeated entry
		"symmetric.mtx": "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n2 1 1\n1 1 1\n2 1 2\n2 2 1\n3 3 1\n",
		// row 0 stores column 1 twice
		"petsc": string(petscBytes(1211216, 3, 3, 4, []int32{2, 1, 1}, []int32{1, 1, 1, 2}, []float64{1, 2, 3, 4})),
	}
	want := map[string]struct {
		dups int64
		rows [][]float64 // values of each row
	}{
		"general.mtx":   {3, [][]float64{{7}, {1}, {6}}},
		"symmetric.mtx": {2, [][]float64{{1, 3}, {3, 1}, {1}}},
		"petsc":         {1, [][]float64{{3}, {3}, {4}}},
	}
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			dir := sharedDir(t, c)
			writeFiles(t, c, dir, files)
			for _, name := range []string{"general.mtx", "symmetric.mtx", "petsc"} {
				r, part, stats, err := ReadMatrixStats(c, filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if stats.Duplicates != want[name].dups {
					t.Errorf("%s: %d duplicates, want %d", name, stats.Duplicates, want[name].dups)
				}
				lo, hi := part.Range(c.Rank())
				for i := lo; i < hi; i++ {
					got := r.Val[r.RowPtr[i-lo]:r.RowPtr[i-lo+1]]
					if !slices.Equal(got, want[name].rows[i]) {
						t.Errorf("%s row %d: %v, want %v", name, i, got, want[name].rows[i])
					}
				}
			}
		})
	}
}
