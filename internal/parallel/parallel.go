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
