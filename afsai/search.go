package afsai

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/internal/bitset"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// asks searches, breadth first, from this rank's rows through the rows it
// holds, to depth reach in the graph of A restricted to the set's ranks'
// rows, and returns per source the rows it reaches but does not hold, as
// pairs (global row, distance), marking them asked. A distance is the
// length of a path, so every row an owner sends for an asked row is within
// reach. A row within reach is reached as soon as the rows before it on a
// shortest path are held, so each round holds all rows one hop further
// than the last at least, and after at most reach rounds nothing is asked.
// Every level of the search is spread over the cores.
func (x *collection) asks(reach int) [][]int64 {
	ls := x.ls
	level := make([]int32, len(x.held)) // of the held rows; -1 not reached
	parallel.For(len(level), func(_, lo, hi int) {
		for s := lo; s < hi; s++ {
			level[s] = -1
		}
	})
	asks := make([][]int64, len(x.sources))
	// touch reaches global row gi at distance d: a held row joins f's next
	// level, a row neither held nor asked for is asked for
	touch := func(f *found, gi int64, d int32) {
		k, i := ls.find(gi)
		if k < 0 || k == len(x.sources) { // outside the set, or this rank's
			return
		}
		idx := &ls.index[k][i]
		switch s := atomic.LoadInt32(idx); {
		case s > 0: // held, in slot s-1
			if atomic.CompareAndSwapInt32(&level[s-1], -1, d) {
				f.next = append(f.next, s-1)
			}
		case s == notHeld:
			if atomic.CompareAndSwapInt32(idx, notHeld, asked) {
				f.asks[k] = append(f.asks[k], gi, int64(d))
			}
		}
	}
	// join gathers the chunks' findings into the next level and asks
	join := func(parts []found) []int32 {
		var next []int32
		for _, f := range parts {
			next = append(next, f.next...)
			for k, a := range f.asks {
				asks[k] = append(asks[k], a...)
			}
		}
		return next
	}
	var next []int32
	me := x.A.Comm.Rank()
	for k := range x.A.Off {
		b := &x.A.Off[k]
		if b.Rank > me {
			break
		}
		if _, in := slices.BinarySearch(ls.set, b.Rank); in {
			next = append(next, join(x.spread(len(b.Cols), func(f *found, j int) { touch(f, b.Cols[j], 1) }))...)
		}
	}
	for d := int32(1); d < int32(reach) && len(next) > 0; d++ {
		frontier := next
		next = join(x.spread(len(frontier), func(f *found, j int) {
			cols, _ := x.row(frontier[j])
			for _, gi := range cols {
				touch(f, gi, d+1)
			}
		}))
	}
	return asks
}

// found is what a chunk of a search level finds: the next level's rows and
// the rows to ask each source for.
type found struct {
	next []int32
	asks [][]int64
}

// spread calls visit for items [0, n) in chunks on all cores, every chunk
// with its own found, and returns those in chunk order.
func (x *collection) spread(n int, visit func(f *found, j int)) []found {
	parts := make([]found, parallel.Chunks(n))
	parallel.For(n, func(c, lo, hi int) {
		// a local, stored once: the chunks' parts share cache lines
		f := found{asks: make([][]int64, len(x.sources))}
		for j := lo; j < hi; j++ {
			visit(&f, j)
		}
		parts[c] = f
	})
	return parts
}

// serve returns the rows of this stripe, ascending, that target k has not
// been sent and that lie within reach of the rows it asks for (pairs of
// global row and distance): within reach minus an asked row's distance
// hops of it, inside this stripe. It marks them sent. Every level of the
// search is spread over the cores. further reports whether a row it
// reached short of the reach has entries in the stripe of another rank of
// the target's set: only then may the target's next search find more.
func (x *collection) serve(k int, ask []int64, reach int) (rows []int32, further bool, err error) {
	first, n := x.A.First(), x.A.LocalRows()
	if len(ask)%2 != 0 {
		return nil, false, fmt.Errorf("afsai: collect rows: rank %d asked for %d numbers, want pairs", x.targets[k], len(ask))
	}
	if x.sent[k] == nil {
		x.sent[k] = make([]bool, n)
	}
	if x.dist == nil {
		x.dist = make([]int32, n) // all 0: not reached
	}
	dist, sent := x.dist, x.sent[k]
	lvls := make([][]int32, reach+1) // the rows by distance; those reached closer since are skipped
	// relax lowers row i's distance to d, if that is lower, and reports
	// whether it did; dist holds distances plus one
	relax := func(i, d int32) bool {
		for {
			old := atomic.LoadInt32(&dist[i])
			if old > 0 && old <= d+1 {
				return false
			}
			if atomic.CompareAndSwapInt32(&dist[i], old, d+1) {
				return true
			}
		}
	}
	for j := 0; j < len(ask); j += 2 {
		i, d := ask[j]-first, ask[j+1]
		if i < 0 || i >= int64(n) || d < 1 || d > int64(reach) {
			return nil, false, fmt.Errorf("afsai: collect rows: rank %d asked for row %d at distance %d, outside this stripe or the reach %d", x.targets[k], ask[j]+1, d, reach)
		}
		if relax(int32(i), int32(d)) {
			lvls[d] = append(lvls[d], int32(i))
		}
	}
	var out []int32
	for d := int32(1); d <= int32(reach); d++ {
		level := lvls[d]
		type part struct{ out, next []int32 }
		parts := make([]part, parallel.Chunks(len(level)))
		parallel.For(len(level), func(c, lo, hi int) {
			var p part // a local, stored once: the chunks' parts share cache lines
			for _, i := range level[lo:hi] {
				if atomic.LoadInt32(&dist[i]) != d+1 { // reached closer since
					continue
				}
				if !sent[i] {
					sent[i] = true
					p.out = append(p.out, i)
				}
				if d < int32(reach) {
					cols, _ := x.A.Diag.Row(int(i))
					for _, col := range cols {
						if relax(col, d+1) {
							p.next = append(p.next, col)
						}
					}
				}
			}
			parts[c] = p
		})
		for _, p := range parts {
			out = append(out, p.out...)
			if d < int32(reach) {
				lvls[d+1] = append(lvls[d+1], p.next...)
			}
		}
	}
	further = x.leadsOn(k, reach)
	for _, level := range lvls {
		for _, i := range level {
			dist[i] = 0
		}
	}
	return ascending(out), further, nil
}

// ascending returns rows, distinct row indices, in ascending order: through
// a bitmap over the range they span, which costs what that range holds,
// not a sort (on poisson7:400 over four GPUs, 15 ms for the 800,000 rows
// of five planes).
func ascending(rows []int32) []int32 {
	if len(rows) == 0 {
		return rows
	}
	lo, hi := slices.Min(rows), slices.Max(rows)
	set := bitset.New(int64(lo), int64(hi))
	parallel.For(len(rows), func(_, a, b int) {
		for _, i := range rows[a:b] {
			set.Add(int64(i))
		}
	})
	return bitset.Members[int32](set, set.Number())
}

// leadsOn reports whether a row that serve's search reached at a distance
// short of the reach has entries in the stripe of a rank of target k's
// set other than this one and the target: the rows of this stripe's
// off-diagonal blocks of those ranks, looked up in dist.
func (x *collection) leadsOn(k, reach int) bool {
	p := x.targets[k]
	for _, b := range x.A.Off {
		if _, in := slices.BinarySearch(x.sets[p], b.Rank); !in || b.Rank == p {
			continue
		}
		for _, i := range b.Rows {
			if d := x.dist[i]; d > 0 && d <= int32(reach) { // dist is the distance plus one
				return true
			}
		}
	}
	return false
}
