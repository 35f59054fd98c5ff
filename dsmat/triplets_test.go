package dsmat

import (
	"slices"
	"strings"
	"testing"
)

func TestAssembleRows(t *testing.T) {
	// rows 2..4 of a 6 x 6 matrix, unordered, with two duplicates of (3,1)
	ts := []Triplet{
		{3, 5, 1}, {2, 0, 2}, {3, 1, 3}, {4, 4, 4}, {3, 1, 5}, {2, 2, 6}, {3, 0, 7}, {3, 1, 0.5},
	}
	r, dups, err := AssembleRows(6, 2, 3, ts)
	if err != nil {
		t.Fatal(err)
	}
	if dups != 2 {
		t.Errorf("dups = %d, want 2", dups)
	}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	want := Rows{
		N: 6, First: 2,
		RowPtr: []int64{0, 2, 5, 6},
		Col:    []int64{0, 2, 0, 1, 5, 4},
		Val:    []float64{2, 6, 7, 8.5, 1, 4},
	}
	if r.N != want.N || r.First != want.First || !slices.Equal(r.RowPtr, want.RowPtr) ||
		!slices.Equal(r.Col, want.Col) || !slices.Equal(r.Val, want.Val) {
		t.Errorf("got %+v, want %+v", *r, want)
	}
}

func TestAssembleRowsEmpty(t *testing.T) {
	r, dups, err := AssembleRows(5, 5, 0, nil)
	if err != nil || dups != 0 || r.Count() != 0 || r.NNZ() != 0 || r.Check() != nil {
		t.Errorf("empty stripe: %+v, %d, %v", r, dups, err)
	}
}

func TestAssembleRowsOutside(t *testing.T) {
	for _, tr := range []Triplet{{1, 0, 1}, {5, 0, 1}, {2, -1, 1}, {2, 6, 1}} {
		_, _, err := AssembleRows(6, 2, 3, []Triplet{{2, 0, 1}, tr})
		if err == nil || !strings.Contains(err.Error(), "outside rows [2,5) and columns [0,6)") {
			t.Errorf("triplet %v: err = %v", tr, err)
		}
	}
}

func TestSortRowsLongRow(t *testing.T) {
	// a row long enough that sort.Sort does not use insertion sort only
	const n = 100
	r := &Rows{N: n, RowPtr: []int64{0, 2 * n}}
	for k := 0; k < 2*n; k++ {
		r.Col = append(r.Col, int64((7*k)%n))
		r.Val = append(r.Val, float64(k))
	}
	if dups := r.Sort(); dups != n {
		t.Errorf("dups = %d, want %d", dups, n)
	}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	for c := 0; c < n; c++ {
		// column c comes from k and k+n with 7k = c mod n
		var want float64
		for k := 0; k < 2*n; k++ {
			if (7*k)%n == c {
				want += float64(k)
			}
		}
		if r.Col[c] != int64(c) || r.Val[c] != want {
			t.Fatalf("entry %d = (%d, %g), want (%d, %g)", c, r.Col[c], r.Val[c], c, want)
		}
	}
}
