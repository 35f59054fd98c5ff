// Package bitset holds sets of integers from a window [lo, hi] as bitmaps,
// filled on all cores. Once filled, a set numbers its members in ascending
// order by the running count of its bits: the sorted, distinct list of
// what was added, and each member's place in it, without a sort or a
// search. It costs a bit per integer of the window, so it suits integers
// that lie close together, as the rows and columns near a stripe's edge.
package bitset

import (
	"math/bits"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Set is a set of integers in [lo, lo+64*len(words)).
type Set struct {
	lo     int64
	words  []uint64
	before []int32 // the members in the words before each word, once numbered
}

// New returns an empty set for the integers [lo, hi] (none when hi < lo).
func New(lo, hi int64) *Set {
	if hi < lo {
		return &Set{lo: lo}
	}
	return &Set{lo: lo, words: make([]uint64, (hi-lo)/64+1)}
}

// Add puts x, which must lie in the set's window, in the set. Many
// goroutines may add at once, also the same integer.
func (s *Set) Add(x int64) {
	k := x - s.lo
	atomic.OrUint64(&s.words[k/64], 1<<(k%64))
}

// Number numbers the members, after the last Add, and returns how many
// there are.
func (s *Set) Number() int {
	s.before = make([]int32, len(s.words))
	n := int32(0)
	for w, x := range s.words {
		s.before[w] = n
		n += int32(bits.OnesCount64(x))
	}
	return int(n)
}

// Index is x's place among the members in ascending order; x must be a
// member and the set numbered.
func (s *Set) Index(x int64) int32 {
	k := x - s.lo
	return s.before[k/64] + int32(bits.OnesCount64(s.words[k/64]&(1<<(k%64)-1)))
}

// Members returns the members of the numbered set s, of which there are n
// (Number's result), in ascending order, written on all cores.
func Members[T int32 | int64](s *Set, n int) []T {
	out := make([]T, n)
	parallel.For(len(s.words), func(_, lo, hi int) {
		for w := lo; w < hi; w++ {
			at := s.before[w]
			for x := s.words[w]; x != 0; x &= x - 1 {
				out[at] = T(s.lo + int64(64*w+bits.TrailingZeros64(x)))
				at++
			}
		}
	})
	return out
}
