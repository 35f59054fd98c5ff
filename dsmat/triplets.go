package dsmat

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Triplet is one matrix entry with 0-based global row and column: the form
// in which the Matrix Market reader (package matfile) and BalanceNNZ collect
// entries before RouteTriplets and AssembleRows.
type Triplet struct {
	Row, Col int64
	Val      float64
}

// AssembleRows builds the stripe of rows [first, first+count) of an n x n
// matrix from triplets in any order. Entries with equal row and column are
// summed; dups is the number of triplets merged that way. Every triplet must
// have its row in the stripe and its column in [0, n).
func AssembleRows(n, first int64, count int, ts []Triplet) (r *Rows, dups int, err error) {
	last := first + int64(count)
	ptr := make([]int64, count+1)
	for _, t := range ts {
		if t.Row < first || t.Row >= last || t.Col < 0 || t.Col >= n {
			return nil, 0, fmt.Errorf("dsmat: entry (%d,%d) outside rows [%d,%d) and columns [0,%d)", t.Row, t.Col, first, last, n)
		}
		ptr[t.Row-first+1]++
	}
	for i := 0; i < count; i++ {
		ptr[i+1] += ptr[i]
	}
	r = &Rows{N: n, First: first, RowPtr: ptr, Col: make([]int64, len(ts)), Val: make([]float64, len(ts))}
	next := slices.Clone(ptr[:count])
	for _, t := range ts {
		k := next[t.Row-first]
		next[t.Row-first]++
		r.Col[k], r.Val[k] = t.Col, t.Val
	}
	return r, r.Sort(), nil
}

// Sort sorts the columns of every row of r and sums entries with equal
// columns, compacting r in place, so that r holds the sorted, unique
// columns that Check verifies. It returns the number of entries merged.
// The rows are sorted on all cores; the compaction, needed only where
// columns repeat, runs on one.
func (r *Rows) Sort() int {
	n := r.Count()
	repeats := make([]int, parallel.Chunks(n))
	parallel.For(n, func(c, lo, hi int) {
		s := new(colVals[int64])
		for i := lo; i < hi; i++ {
			a, b := r.RowPtr[i], r.RowPtr[i+1]
			if b-a < 2 {
				continue
			}
			s.col, s.val = r.Col[a:b], r.Val[a:b]
			if !sort.IsSorted(s) {
				sort.Sort(s)
			}
			for k := a + 1; k < b; k++ {
				if r.Col[k] == r.Col[k-1] {
					repeats[c]++
				}
			}
		}
	})
	dups := 0
	for _, d := range repeats {
		dups += d
	}
	if dups == 0 {
		return 0
	}
	w, lo := int64(0), int64(0)
	for i := 0; i < n; i++ {
		hi := r.RowPtr[i+1]
		start := w
		for k := lo; k < hi; k++ {
			if w > start && r.Col[w-1] == r.Col[k] {
				r.Val[w-1] += r.Val[k]
				continue
			}
			r.Col[w], r.Val[w] = r.Col[k], r.Val[k]
			w++
		}
		r.RowPtr[i+1] = w
		lo = hi
	}
	r.Col, r.Val = r.Col[:w], r.Val[:w]
	return dups
}

// colVals sorts one row's columns (global or local) together with its
// values.
type colVals[C int32 | int64] struct {
	col []C
	val []float64
}

func (s *colVals[C]) Len() int           { return len(s.col) }
func (s *colVals[C]) Less(a, b int) bool { return s.col[a] < s.col[b] }
func (s *colVals[C]) Swap(a, b int) {
	s.col[a], s.col[b] = s.col[b], s.col[a]
	s.val[a], s.val[b] = s.val[b], s.val[a]
}

// RouteTriplets sends every triplet to the rank that owns its row under part
// and returns the triplets whose rows this rank owns. Collective. Every row
// must lie in [0, part.N()). The triplets this rank keeps stay in place (ts
// is reused); the others travel as three int64 words each (row, column,
// value bits) in a single Alltoallv.
func RouteTriplets(c *comm.Comm, part Partition, ts []Triplet) ([]Triplet, error) {
	lo, hi := part.Range(c.Rank())
	mine := func(t Triplet) bool { return t.Row >= lo && t.Row < hi }
	recv, err := exchange(c, len(ts), 3, func(k int) int {
		if mine(ts[k]) {
			return -1
		}
		return part.Owner(ts[k].Row)
	}, func(k int, w []int64) {
		t := ts[k]
		w[0], w[1], w[2] = t.Row, t.Col, int64(math.Float64bits(t.Val))
	})
	if err != nil {
		return nil, fmt.Errorf("dsmat: route entries: %w", err)
	}
	keep := ts[:0]
	for _, t := range ts {
		if mine(t) {
			keep = append(keep, t)
		}
	}
	for k := 0; k < len(recv); k += 3 {
		keep = append(keep, Triplet{Row: recv[k], Col: recv[k+1], Val: math.Float64frombits(uint64(recv[k+2]))})
	}
	return keep, nil
}

// exchange sends items to other ranks in one Alltoallv (after one Alltoall
// of counts): item k of n, encoded by put into width int64 words, goes to
// rank dest(k), or nowhere when dest(k) < 0. It returns the words received,
// grouped by source rank in rank order. Collective.
func exchange(c *comm.Comm, n, width int, dest func(k int) int, put func(k int, w []int64)) ([]int64, error) {
	np := c.Size()
	sendN, recvN := make([]int64, np), make([]int64, np)
	for k := range n {
		if p := dest(k); p >= 0 {
			sendN[p]++
		}
	}
	if err := comm.Alltoall(c, sendN, recvN); err != nil {
		return nil, err
	}
	sendCounts, recvCounts, next := make([]int, np), make([]int, np), make([]int, np)
	sendTotal, recvTotal := 0, 0
	for p := range np {
		sendCounts[p], recvCounts[p] = width*int(sendN[p]), width*int(recvN[p])
		next[p] = sendTotal
		sendTotal += sendCounts[p]
		recvTotal += recvCounts[p]
	}
	send := make([]int64, sendTotal)
	for k := range n {
		if p := dest(k); p >= 0 {
			put(k, send[next[p]:next[p]+width])
			next[p] += width
		}
	}
	recv := make([]int64, recvTotal)
	if err := comm.Alltoallv(c, send, sendCounts, recv, recvCounts); err != nil {
		return nil, err
	}
	return recv, nil
}
