package dsmat

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/csr"
)

// randomBlock is a rows x cols block whose row i holds up to perRow
// distinct columns drawn from [i*cols/rows - width/2, +width) (clipped): a
// band for a small width, scattered for width >= cols.
func randomBlock(rng *rand.Rand, rows, cols, perRow, width int) *csr.Matrix[float64] {
	a := &csr.Matrix[float64]{Rows: rows, Cols: cols, RowPtr: make([]int32, rows+1)}
	for i := range rows {
		var row []int32
		for range perRow {
			j := i*cols/rows - width/2 + rng.IntN(width)
			if j >= 0 && j < cols && !slices.Contains(row, int32(j)) {
				row = append(row, int32(j))
			}
		}
		slices.Sort(row)
		for _, j := range row {
			a.ColIdx, a.Val = append(a.ColIdx, j), append(a.Val, rng.Float64())
		}
		a.RowPtr[i+1] = int32(len(a.ColIdx))
	}
	return a
}

// withColumn0 adds column 0 to every row of a that lacks it: a' gets a row
// as long as a has rows.
func withColumn0(a *csr.Matrix[float64]) *csr.Matrix[float64] {
	b := &csr.Matrix[float64]{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int32, a.Rows+1)}
	for i := range a.Rows {
		cols, vals := a.Row(i)
		if len(cols) == 0 || cols[0] != 0 {
			b.ColIdx, b.Val = append(b.ColIdx, 0), append(b.Val, -1)
		}
		b.ColIdx, b.Val = append(b.ColIdx, cols...), append(b.Val, vals...)
		b.RowPtr[i+1] = int32(len(b.ColIdx))
	}
	return b
}

// TestTransposeBlock: on banded blocks (the counting sort over windows) and
// scattered ones, whose four chunks' windows span more than the block's
// entries and columns (atomic placement and sorted rows, one row of a'
// 2000 entries long), with one core and with four, transposeBlock gives
// the serial transpose entry for entry.
func TestTransposeBlock(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(3, 4))
	blocks := map[string]*csr.Matrix[float64]{
		"banded":    randomBlock(rng, 2000, 2000, 7, 40),
		"scattered": withColumn0(randomBlock(rng, 2000, 20000, 2, 40000)),
		"long rows": randomBlock(rng, 3000, 40, 6, 80), // 40 columns: rows of a' hold hundreds
		"empty":     {Rows: 300, Cols: 10, RowPtr: make([]int32, 301)},
	}
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		for name, a := range blocks {
			got, want := transposeBlock(a), csr.Transpose(a)
			if got.Rows != want.Rows || got.Cols != want.Cols || !slices.Equal(got.RowPtr, want.RowPtr) ||
				!slices.Equal(got.ColIdx, want.ColIdx) || !slices.Equal(got.Val, want.Val) {
				t.Errorf("%s on %d cores: the transpose differs from the serial one", name, procs)
			}
		}
	}
}
