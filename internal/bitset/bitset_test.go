package bitset

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestSet: what many goroutines add, repeats included, comes back sorted
// and distinct, and every member's Index is its place in that list; an
// empty window holds nothing.
func TestSet(t *testing.T) {
	for _, tc := range []struct{ lo, hi int64 }{{0, 0}, {5, 70}, {-130, 1000}, {1 << 40, 1<<40 + 100000}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.hi-tc.lo)))
		var added []int64
		for range 2000 {
			added = append(added, tc.lo+rng.Int64N(tc.hi-tc.lo+1))
		}
		s := New(tc.lo, tc.hi)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for _, x := range added[g*len(added)/4 : (g+1)*len(added)/4] {
					s.Add(x)
				}
			})
		}
		wg.Wait()
		want := slices.Compact(slices.Sorted(slices.Values(added)))
		n := s.Number()
		got := Members[int64](s, n)
		if !slices.Equal(got, want) {
			t.Fatalf("[%d,%d]: members %v, want %v", tc.lo, tc.hi, got, want)
		}
		for k, x := range want {
			if i := s.Index(x); int(i) != k {
				t.Fatalf("[%d,%d]: Index(%d) = %d, want %d", tc.lo, tc.hi, x, i, k)
			}
		}
	}
	empty := New(7, 6)
	if n := empty.Number(); n != 0 || len(Members[int32](empty, n)) != 0 {
		t.Errorf("an empty window has %d members", n)
	}
}
