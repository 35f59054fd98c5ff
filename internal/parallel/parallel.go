// Package parallel runs loops over index ranges on all the cores the process
// may use (runtime.GOMAXPROCS). The set-up stages of the distributed FSAI
// are loops over rows or entries whose iterations are independent, or can be
// made so by giving every chunk its own output; each such loop is one call
// of For.
//
// The chunks depend only on n and GOMAXPROCS, so two calls with the same n
// split it the same way: a counting sort can count per chunk in one call and
// place per chunk in the next. Go's runtime may change GOMAXPROCS while a
// program runs (following container CPU limits) unless the program has set
// it: programs call Pin at start.
package parallel

import (
	"runtime"
	"sync"
)

// grain is the fewest iterations worth a goroutine of their own.
const grain = 64

// Pin sets GOMAXPROCS to its current value, which stops the Go runtime
// from changing it while the program runs, so that consecutive calls of
// For split a range alike.
func Pin() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0)) }

// Chunks returns the number of chunks For splits [0, n) into: one per
// GOMAXPROCS, fewer when n is small, and at least one.
func Chunks(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/grain))
}

// Copy copies src into dst, which must be as long, on all cores: a copy
// into fresh memory then faults its pages in on every core, not one.
func Copy[T any](dst, src []T) {
	For(len(src), func(_, lo, hi int) {
		copy(dst[lo:hi], src[lo:hi])
	})
}

// Map returns f of every element of in, in a slice of its own made on all
// cores.
func Map[A, B any](in []A, f func(A) B) []B {
	out := make([]B, len(in))
	For(len(in), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			out[k] = f(in[k])
		}
	})
	return out
}

// Clear zeroes s on all cores: the pages of fresh memory are then mapped
// by every core, not one by one by whatever fills s next on one core (an
// MPI receive).
func Clear[T any](s []T) {
	For(len(s), func(_, lo, hi int) {
		clear(s[lo:hi])
	})
}

// For calls f(c, lo, hi) for every chunk c of Chunks(n) consecutive chunks
// [lo, hi) covering [0, n), in its own goroutine unless there is only one,
// and returns when all calls have returned. The chunks differ in size by at
// most one.
func For(n int, f func(c, lo, hi int)) {
	k := Chunks(n)
	if k == 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for c := range k {
		lo, hi := c*n/k, (c+1)*n/k
		wg.Go(func() { f(c, lo, hi) })
	}
	wg.Wait()
}

// ForErr is For with an f that can fail: every chunk runs, and the error
// is the first failing chunk's in range order (nil when none failed), so
// it names the same first bad item on any number of cores.
func ForErr(n int, f func(c, lo, hi int) error) error {
	errs := make([]error, Chunks(n))
	For(n, func(c, lo, hi int) { errs[c] = f(c, lo, hi) })
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Scan sets out[i+1] = out[i] + count(i) for i in [0, len(out)-1), from
// the out[0] it is given: row pointers from row lengths. Every chunk sums
// its counts, then writes its part from the sum of the chunks before it, so
// count is called twice per index; count(i) is called before out[i+1] is
// written, so it may read out[i+1] (Accumulate).
func Scan[T int32 | int64](out []T, count func(i int) T) {
	scanChunks(out, func(lo, hi int) T {
		var s T
		for i := lo; i < hi; i++ {
			s += count(i)
		}
		return s
	}, func(lo, hi int, at T) {
		for i := lo; i < hi; i++ {
			at += count(i)
			out[i+1] = at
		}
	})
}

// Accumulate turns the row lengths p[1:] into row pointers in place,
// p[i+1] += p[i] in order, on all cores. Fresh memory that it writes first
// (lengths that are mostly zeros) is then touched on all cores, not one.
// It is Scan with the lengths read in the loops themselves, about 5 times
// faster than through Scan's function (BenchmarkAccumulate, 4M row
// pointers on 2 cores: 2.0-2.4 ms against 10.9-11.6).
func Accumulate[T int32 | int64](p []T) {
	scanChunks(p, func(lo, hi int) T {
		var s T
		for _, v := range p[lo+1 : hi+1] {
			s += v
		}
		return s
	}, func(lo, hi int, at T) {
		q := p[lo+1 : hi+1]
		for i, v := range q {
			at += v
			q[i] = at
		}
	})
}

// scanChunks is the prefix sum of Scan and Accumulate over out[1:], from
// out[0]: sum returns the total of a chunk of indices [lo, hi), fill writes
// the chunk's sums from at, the total of the chunks before it.
func scanChunks[T int32 | int64](out []T, sum func(lo, hi int) T, fill func(lo, hi int, at T)) {
	n := len(out) - 1
	if n < 1 {
		return
	}
	sums := make([]T, Chunks(n)+1)
	For(n, func(c, lo, hi int) { sums[c+1] = sum(lo, hi) })
	sums[0] = out[0]
	for c := 1; c < len(sums); c++ {
		sums[c] += sums[c-1]
	}
	For(n, func(c, lo, hi int) { fill(lo, hi, sums[c]) })
}

// Gather sets dst[k] = src[idx[k]] on all cores.
func Gather[T any](dst, src []T, idx []int32) {
	For(len(dst), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			dst[k] = src[idx[k]]
		}
	})
}

// SortedUnion returns the union of the ascending lists parts, each without
// repeats, ascending and without repeats: merged pairwise, each round's
// pairs in goroutines of their own. It may return one of parts itself.
func SortedUnion(parts [][]int64) []int64 {
	if len(parts) == 0 {
		return nil
	}
	for len(parts) > 1 {
		next := make([][]int64, (len(parts)+1)/2)
		var wg sync.WaitGroup
		for k := range next {
			if 2*k+1 == len(parts) {
				next[k] = parts[2*k]
				continue
			}
			wg.Go(func() { next[k] = mergeSorted(parts[2*k], parts[2*k+1]) })
		}
		wg.Wait()
		parts = next
	}
	return parts[0]
}

// mergeSorted returns the union of the ascending lists a and b, each
// without repeats, ascending and without repeats.
func mergeSorted(a, b []int64) []int64 {
	out := make([]int64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		case b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
