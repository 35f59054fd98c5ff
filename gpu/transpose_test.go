package gpu

import (
	"flag"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

var benchTransposeN = flag.Int("gpu.tn", 200,
	"grid points per side of the 7-point Laplacian whose lower triangle BenchmarkTranspose transposes")

// lowerTriangle returns the entries of m on and below the diagonal (the
// pattern of an FSAI factor of m).
func lowerTriangle(m *csr.Matrix[float64]) *csr.Matrix[float64] {
	l := &csr.Matrix[float64]{Rows: m.Rows, Cols: m.Cols, RowPtr: make([]int32, 1, m.Rows+1)}
	for i := 0; i < m.Rows; i++ {
		cols, vals := m.Row(i)
		for k, c := range cols {
			if int(c) <= i {
				l.ColIdx = append(l.ColIdx, c)
				l.Val = append(l.Val, vals[k])
			}
		}
		l.RowPtr = append(l.RowPtr, int32(len(l.ColIdx)))
	}
	return l
}

// longRowAndColumn returns an n x n block of about 4 random entries per row,
// where row 17 and column 5 hold about 200 entries each.
func longRowAndColumn(rng *rand.Rand, n int) *csr.Matrix[float64] {
	var e []csr.Entry[float64]
	add := func(i, j int) {
		e = append(e, csr.Entry[float64]{Row: int32(i), Col: int32(j), Val: rng.NormFloat64()})
	}
	for i := 0; i < n; i++ {
		for k := rng.IntN(8); k > 0; k-- {
			add(i, rng.IntN(n))
		}
	}
	for k := 0; k < 200; k++ {
		add(17, rng.IntN(n))
		add(rng.IntN(n), 5)
	}
	return csr.FromEntries(n, n, e)
}

// transposeCases are the blocks Transpose is checked on: rows of the
// transpose short (sorted by insertion) and long (by heapsort, beyond 64
// entries), empty rows and columns, a prefix sum over one tile and over
// more tiles than one block scans at once (5M columns), and empty blocks.
func transposeCases() map[string]*csr.Matrix[float64] {
	rng := rand.New(rand.NewPCG(31, 32))
	return map[string]*csr.Matrix[float64]{
		"square_2000":         randomBlock(rng, 2000, 2000, 12),
		"wide_500x20000":      randomBlock(rng, 500, 20000, 30),
		"wide_1000x5000000":   randomBlock(rng, 1000, 5_000_000, 20),
		"tall_100000x3000":    randomBlock(rng, 100_000, 3000, 8),
		"long_row_and_column": longRowAndColumn(rng, 3000),
		"laplace7_lower_20":   lowerTriangle(testmatrices.Stencil3D(20, 7)),
		"block_0x5":           {Rows: 0, Cols: 5, RowPtr: make([]int32, 1)},
		"block_7x0":           {Rows: 7, Cols: 0, RowPtr: make([]int32, 8)},
	}
}

// checkSameMatrix fails unless got equals want exactly: shape, pattern and
// the bits of every value.
func checkSameMatrix(t *testing.T, what string, got, want *csr.Matrix[float64]) {
	t.Helper()
	if d := testmatrices.Diff(got, want); d != "" {
		t.Fatalf("%s: %s", what, d)
	}
}

// readBack is ReadMatrix that fails the test on an error.
func readBack(t *testing.T, b *Backend, m backend.Matrix) (*csr.Matrix[float64], []int32) {
	t.Helper()
	got, rowMap, err := b.ReadMatrix(m)
	if err != nil {
		t.Fatal(err)
	}
	return got, rowMap
}

// TestTranspose checks, in both precisions, that ReadMatrix gives back the
// block that NewMatrix uploaded (values rounded to float32 in single
// precision) with no row map, and that the device transpose read back
// equals csr.Transpose of that block exactly.
func TestTranspose(t *testing.T) {
	b := openGPU(t)
	for name, a := range transposeCases() {
		for _, p := range []backend.Precision{backend.Double, backend.Single} {
			what := name + "/" + p.String()
			host := a
			if p == backend.Single {
				host = csr.Convert[float64](csr.Convert[float32](a))
			}
			m, err := b.NewMatrix(a, nil, p)
			if err != nil {
				t.Fatal(err)
			}
			got, rowMap := readBack(t, b, m)
			checkSameMatrix(t, what+" read back", got, host)
			if rowMap != nil {
				t.Errorf("%s: row map of %d entries read back from a block without one", what, len(rowMap))
			}
			mt, err := b.Transpose(m)
			if err != nil {
				t.Fatal(err)
			}
			if mt.Precision() != p || mt.NNZ() != a.NNZ() || mt.(*Matrix).Width() != spmvWidth(a.Cols, a.NNZ(), p) {
				t.Errorf("%s: transpose in %v, %d entries, width %d", what, mt.Precision(), mt.NNZ(), mt.(*Matrix).Width())
			}
			got, _ = readBack(t, b, mt)
			checkSameMatrix(t, what+" transposed", got, csr.Transpose(host))
			mt.Free()
			m.Free()
		}
	}
}

// TestTransposeRefuses checks that Transpose refuses a row-mapped block
// and a matrix not of the backend, with errors that leave the backend
// usable, and that ReadMatrix returns a block's row map.
func TestTransposeRefuses(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(33, 34))
	a := randomBlock(rng, 300, 200, 10)
	rowMap := make([]int32, a.Rows)
	for k := range rowMap {
		rowMap[k] = int32(2*k + 1)
	}
	m, err := b.NewMatrix(a, rowMap, backend.Single)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if _, err := b.Transpose(m); err == nil {
		t.Error("Transpose of a row-mapped block: no error")
	}
	if _, err := b.Transpose((*Matrix)(nil)); err == nil {
		t.Error("Transpose of a nil matrix: no error")
	}
	if _, _, err := b.ReadMatrix(nil); err == nil {
		t.Error("ReadMatrix of nil: no error")
	}
	if err := b.Err(); err != nil {
		t.Fatalf("a refused call left an error on the backend: %v", err)
	}
	got, gotMap := readBack(t, b, m)
	checkSameMatrix(t, "row-mapped block read back", got, csr.Convert[float64](csr.Convert[float32](a)))
	if !slices.Equal(gotMap, rowMap) {
		t.Errorf("row map read back as %v, want %v", gotMap, rowMap)
	}
}

// BenchmarkTranspose transposes the lower triangle of the 7-point
// Laplacian on -gpu.tn points per side (8M rows and 36M entries by
// default) on the device, result allocated and freed each time, and
// reports the device time per transpose (dev-ms/op) beside the wall time
// (ns/op, allocation and the final wait included) and, for comparison, the
// time of csr.Transpose on the host (host-ms).
func BenchmarkTranspose(bm *testing.B) {
	be := openGPU(bm)
	a := lowerTriangle(testmatrices.Stencil3D(*benchTransposeN, 7))
	start := time.Now()
	csr.Transpose(a)
	host := time.Since(start)
	for _, p := range []backend.Precision{backend.Double, backend.Single} {
		bm.Run(p.String(), func(bm *testing.B) {
			m, err := be.NewMatrix(a, nil, p)
			if err != nil {
				bm.Fatal(err)
			}
			defer m.Free()
			var dev time.Duration
			bm.ResetTimer()
			for range bm.N {
				var mt backend.Matrix
				var terr error
				d, err := be.Time(func() { mt, terr = be.Transpose(m) })
				if err != nil || terr != nil {
					bm.Fatal(err, terr)
				}
				dev += d
				mt.Free()
			}
			bm.ReportMetric(dev.Seconds()*1e3/float64(bm.N), "dev-ms/op")
			bm.ReportMetric(host.Seconds()*1e3, "host-ms")
		})
	}
}
