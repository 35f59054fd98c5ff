package afsai

import (
	"slices"
	"testing"
)

// TestPrefixSum: row lengths become row pointers, as the serial sum gives,
// for lengths too few and enough for several chunks.
func TestPrefixSum(t *testing.T) {
	for _, n := range []int{0, 1, 5, 1000, 100000} {
		p := make([]int32, n+1)
		for i := 1; i <= n; i++ {
			p[i] = int32(i % 7 * (i % 3))
		}
		want := slices.Clone(p)
		for i := range n {
			want[i+1] += want[i]
		}
		prefixSum(p)
		if !slices.Equal(p, want) {
			t.Errorf("%d lengths: got %v..., want %v...", n, p[:min(n+1, 8)], want[:min(n+1, 8)])
		}
	}
}
