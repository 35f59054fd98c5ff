package dsmat

import (
	"slices"
	"testing"
)

// TestOffTriplets: triplets become offEntries in local rows, each row's
// columns sorted whatever order they came in, only the rows that hold
// entries stored; an entry outside the stripe or a repeated one is refused.
func TestOffTriplets(t *testing.T) {
	const n, first, count = 1 << 40, 1 << 30, 1 << 30 // a stripe far too long to walk
	ts := []Triplet{
		{Row: first + 7, Col: 3, Val: 1}, {Row: first + 900, Col: 5, Val: 2},
		{Row: first + 7, Col: 1, Val: 3}, {Row: first + 900, Col: 2, Val: 4}, {Row: first + 7, Col: 2, Val: 5},
	}
	e, err := offTriplets(n, first, count, ts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(e.rows, []int32{7, 900}) || !slices.Equal(e.ptr, []int64{0, 3, 5}) ||
		!slices.Equal(e.col, []int64{1, 2, 3, 2, 5}) || !slices.Equal(e.val, []float64{3, 5, 1, 4, 2}) {
		t.Errorf("got rows %v ptr %v col %v val %v", e.rows, e.ptr, e.col, e.val)
	}
	if e, err := offTriplets(n, first, count, nil); e != nil || err != nil {
		t.Errorf("no triplets: %v, %v", e, err)
	}
	for _, bad := range [][]Triplet{
		{{Row: first - 1, Col: 0}},
		{{Row: first + count, Col: 0}},
		{{Row: first, Col: n}},
		{{Row: first, Col: 4, Val: 1}, {Row: first, Col: 4, Val: 2}},
	} {
		if _, err := offTriplets(n, first, count, bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
