package cudafsai

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// The plans must place their rows, as afsai.Updater looks for.
var _ afsai.FixedPlan = (*fixedPlan)(nil)

// TestFixedPlanPlaces: the rows that ComputeOnDevice leaves on the device,
// stored by Store into two float32 blocks through index maps (one a
// permutation of all entries, as the block of G' takes them, one a
// repeating subset) and picked to the host, are Compute's rows laid out on
// their whole patterns (zeros where a breakdown left columns out), bit for
// bit; for all rows in one batch and in batches of 97, twice on one
// placement, on every pattern of TestFixedPlanMatchesCPU (the matrix
// "breakdown" must break down on one). Maps out of range are refused.
func TestFixedPlanPlaces(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(11, 2))
	for _, c := range fsaiCases(t) {
		n := c.a.Rows
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		fallbacks := 0
		for pname, patterns := range fixedPatterns(t, c.a32, all) {
			for _, batch := range []int{0, 97} {
				t.Run(fmt.Sprintf("%s/%s/batch%d", c.name, pname, batch), func(t *testing.T) {
					fallbacks += checkPlaced(t, b, rng, c.a32, all, patterns, batch)
				})
			}
		}
		if c.name == "breakdown" && fallbacks == 0 {
			t.Errorf("%s: no row broke down on any pattern", c.name)
		}
	}
}

// checkPlaced runs TestFixedPlanPlaces's checks on one matrix, patterns and
// batch size, and returns the rows that broke down.
func checkPlaced(t *testing.T, b *Device, rng *rand.Rand, a *csr.Matrix[float32], rows []int, patterns [][]int32, batch int) int {
	p, err := b.prepareFixed(a, rows, patterns, batch)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Free()
	nnz := p.run.job.outLen
	perm := make([]int32, nnz)
	for k := range perm {
		perm[k] = int32(k)
	}
	rng.Shuffle(nnz, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	some := make([]int32, nnz/3+1)
	for k := range some {
		some[k] = int32(rng.IntN(nnz))
	}
	pick := some[:min(len(some), 50)]
	if err := p.Place([][]int32{perm, {int32(nnz)}}, pick); err == nil {
		t.Error("an entry past the rows accepted")
	}
	if err := p.Place([][]int32{perm, some}, pick); err != nil {
		t.Fatal(err)
	}
	blocks := []backend.Matrix{placeBlock(t, b, len(perm)), placeBlock(t, b, len(some))}
	defer blocks[0].Free()
	defer blocks[1].Free()
	fallbacks := 0
	for round, vals := range [][]float32{a.Val, scaledValues(a)} {
		g, wst, err := p.Compute(vals)
		if err != nil {
			t.Fatal(err)
		}
		want := onWholePatterns(g, rows, patterns)
		st, err := p.ComputeOnDevice(vals)
		if err != nil {
			t.Fatal(err)
		}
		if st != wst {
			t.Errorf("round %d: stats %+v, Compute's %+v", round, st, wst)
		}
		fallbacks += st.FallbackRows
		picked := make([]float32, len(pick))
		if err := p.Store(blocks, picked); err != nil {
			t.Fatal(err)
		}
		for k, m := range [][]int32{perm, some} {
			got, _, err := b.ReadMatrix(blocks[k])
			if err != nil {
				t.Fatal(err)
			}
			for e, i := range m {
				if float32(got.Val[e]) != want[i] {
					t.Fatalf("round %d: block %d value %d = %g, entry %d of the rows is %g", round, k, e, got.Val[e], i, want[i])
				}
			}
		}
		for j, i := range pick {
			if picked[j] != want[i] {
				t.Fatalf("round %d: picked %d = %g, entry %d of the rows is %g", round, j, picked[j], i, want[i])
			}
		}
	}
	return fallbacks
}

// onWholePatterns lays the rows g out on their whole patterns: row after
// row, the pattern's columns ascending, then the diagonal; zero for a
// column g's row lacks.
func onWholePatterns(g *csr.Matrix[float32], rows []int, patterns [][]int32) []float32 {
	var out []float32
	for k, i := range rows {
		cols := slices.DeleteFunc(slices.Clone(patterns[k]), func(c int32) bool { return int(c) == i })
		slices.Sort(cols)
		gc, gv := g.Row(k)
		for _, c := range append(cols, int32(i)) {
			v := float32(0)
			if at, ok := slices.BinarySearch(gc, c); ok {
				v = gv[at]
			}
			out = append(out, v)
		}
	}
	return out
}

// placeBlock returns a float32 block of nnz entries (one row) to store
// into.
func placeBlock(t *testing.T, b *Device, nnz int) backend.Matrix {
	t.Helper()
	a := &csr.Matrix[float64]{Rows: 1, Cols: nnz, RowPtr: []int32{0, int32(nnz)}, ColIdx: make([]int32, nnz), Val: make([]float64, nnz)}
	for k := range a.ColIdx {
		a.ColIdx[k] = int32(k)
	}
	m, err := b.Backend().NewMatrix(a, nil, backend.Single)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scaledValues returns new values on a's pattern: D a D for a positive
// diagonal D, SPD when a is.
func scaledValues(a *csr.Matrix[float32]) []float32 {
	out := make([]float32, len(a.Val))
	d := func(i int) float32 { return 1.25 + float32(i%5)/8 }
	for i := range a.Rows {
		for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
			out[k] = d(i) * a.Val[k] * d(int(a.ColIdx[k]))
		}
	}
	return out
}
