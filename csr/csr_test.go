package csr

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

func TestFromEntriesSortsAndSums(t *testing.T) {
	es := []Entry[float64]{{2, 1, 1}, {0, 2, 2}, {2, 1, 3}, {0, 0, 4}, {1, 2, 5}, {2, 0, 6}}
	m := FromEntries(3, 3, es)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{4, 0, 2}, {0, 0, 5}, {6, 4, 0}}
	for i := range want {
		for j := range want[i] {
			if m.At(i, j) != want[i][j] {
				t.Fatalf("(%d,%d) = %g, want %g", i, j, m.At(i, j), want[i][j])
			}
		}
	}
	if m.NNZ() != 5 {
		t.Fatalf("%d entries stored, want 5 (one duplicate summed)", m.NNZ())
	}
}

// TestFromEntriesLongRows exercises the merge sort of long rows against a
// dense accumulation in the order given, bit for bit, with the entries of
// each row spread over the chunks of several cores.
func TestFromEntriesLongRows(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 7
	const cols = 200
	var es []Entry[float64]
	for i := range n {
		for k := 0; k < 300; k++ {
			es = append(es, Entry[float64]{int32(i), int32(rng.IntN(cols)), rng.Float64() - 0.5})
		}
	}
	rng.Shuffle(len(es), func(a, b int) { es[a], es[b] = es[b], es[a] })
	dense := make([][]float64, n)
	for i := range dense {
		dense[i] = make([]float64, cols)
	}
	for _, e := range es {
		dense[e.Row][e.Col] += e.Val
	}
	m := FromEntries(n, cols, es)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	for i := range dense {
		for j := range dense[i] {
			if m.At(i, j) != dense[i][j] {
				t.Fatalf("(%d,%d) = %g, want %g", i, j, m.At(i, j), dense[i][j])
			}
		}
	}
}

func TestTransposeAndConvert(t *testing.T) {
	m := FromEntries(2, 3, []Entry[float64]{{0, 2, 1.5}, {1, 0, -2}, {1, 2, 0.1}})
	tr := Transpose(m)
	if tr.Rows != 3 || tr.Cols != 2 || tr.At(2, 0) != 1.5 || tr.At(0, 1) != -2 || tr.At(2, 1) != 0.1 || tr.Check() != nil {
		t.Fatalf("transpose %+v", tr)
	}
	s := Convert[float32](m)
	if s.At(1, 2) != float32(0.1) || s.NNZ() != 3 {
		t.Fatalf("convert %+v", s)
	}
	y := []float64{1, 1}
	MulVec(m, []float64{1, 2, 4}, 1, y)
	if y[0] != 7 || math.Abs(y[1]+0.6) > 1e-15 {
		t.Fatalf("MulVec gave %v", y)
	}
}

func TestCheckRejects(t *testing.T) {
	bad := []*Matrix[float64]{
		{Rows: 1, Cols: 2, RowPtr: []int32{0, 2}, ColIdx: []int32{1, 0}, Val: []float64{1, 1}}, // unsorted
		{Rows: 1, Cols: 2, RowPtr: []int32{0, 1}, ColIdx: []int32{2}, Val: []float64{1}},       // out of range
		{Rows: 2, Cols: 2, RowPtr: []int32{0, 1}, ColIdx: []int32{0}, Val: []float64{1}},       // short row pointers
	}
	for k, m := range bad {
		if m.Check() == nil {
			t.Errorf("matrix %d passed Check", k)
		}
	}
}

// TestQuadDiag: g_k' A g_k by hand on a 2x2 matrix, for float64 and
// float32 factors.
func TestQuadDiag(t *testing.T) {
	a := &Matrix[float64]{Rows: 2, Cols: 2, RowPtr: []int32{0, 2, 4}, ColIdx: []int32{0, 1, 0, 1}, Val: []float64{4, 1, 1, 3}}
	g := &Matrix[float64]{Rows: 3, Cols: 2, RowPtr: []int32{0, 1, 3, 5}, ColIdx: []int32{0, 0, 1, 0, 1},
		Val: []float64{0.5, 1, 1, 0, 0.5}}
	want := []float64{1, 9, 0.75} // 0.25*4; 4+2*1+3; 0.25*3
	if got := QuadDiag(a, g); !slices.Equal(got, want) {
		t.Errorf("float64 factor: %v, want %v", got, want)
	}
	if got := QuadDiag(a, Convert[float32](g)); !slices.Equal(got, want) {
		t.Errorf("float32 factor: %v, want %v", got, want)
	}
}
