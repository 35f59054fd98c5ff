package dsmat

import (
	"fmt"
	"sort"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// ValuePlan moves values between ranks for a structure that stays while
// its values change: a transpose, a local system gathered from neighbours.
// The structure is found once, by running the ordinary code on entry
// numbers instead of values (float64 holds them exactly); the plan then
// sends the values alone, each to positions known in advance, in one
// Alltoallv. The values that stay on their rank, most of them, are copied
// directly.
//
// Every rank numbers its own source entries 0..n-1; globally, entry k of
// rank q is number FirstEntry(q)+k.
type ValuePlan struct {
	c          *comm.Comm
	sendIdx    []int32 // source entries, grouped by the rank that wants them
	sendCounts []int
	recvPos    []int32 // the destination position of each value received
	recvCounts []int
	send, recv []float64
	// the values that stay: destination position localPos[k] takes
	// source entry localIdx[k]
	localIdx, localPos []int32
	n, m               int // source entries, destination positions
}

// FirstEntry returns the global number of this rank's first source entry
// when it has n: the ranks before it number theirs first. Collective.
func FirstEntry(c *comm.Comm, n int) (int64, error) {
	first, err := comm.Exscan(c, int64(n))
	if err != nil {
		return 0, fmt.Errorf("dsmat: number entries: %w", err)
	}
	return first, nil
}

// NewValuePlan makes the plan that sets position j of this rank's
// destination to the value of source entry want[j] (a global number), for
// a rank with n source entries. Collective.
func NewValuePlan(c *comm.Comm, n int, want []int64) (*ValuePlan, error) {
	np := c.Size()
	counts := make([]int64, np)
	counts[c.Rank()] = int64(n)
	if err := comm.Allreduce(c, comm.Sum, counts); err != nil {
		return nil, fmt.Errorf("dsmat: value plan: %w", err)
	}
	first := make([]int64, np+1)
	for q, k := range counts {
		first[q+1] = first[q] + k
	}
	p := &ValuePlan{c: c, sendCounts: make([]int, np), recvCounts: make([]int, np), n: n, m: len(want)}
	byRank := make([][]int32, np) // destination positions, per source rank
	for j, id := range want {
		if id < 0 || id >= first[np] {
			return nil, fmt.Errorf("dsmat: value plan: entry %d of %d", id, first[np])
		}
		q := sort.Search(np, func(q int) bool { return first[q+1] > id })
		byRank[q] = append(byRank[q], int32(j))
	}
	me := c.Rank()
	p.localPos = byRank[me]
	p.localIdx = make([]int32, len(p.localPos))
	for k, j := range p.localPos {
		p.localIdx[k] = int32(want[j] - first[me])
	}
	byRank[me] = nil
	asks := make([]int64, 0, len(want)) // source indices, grouped by source rank
	for q, pos := range byRank {
		p.recvCounts[q] = len(pos)
		p.recvPos = append(p.recvPos, pos...)
		for _, j := range pos {
			asks = append(asks, want[j]-first[q])
		}
	}
	asked := make([]int32, np)
	for q, k := range p.recvCounts {
		asked[q] = int32(k)
	}
	wanted := make([]int32, np)
	if err := comm.Alltoall(c, asked, wanted); err != nil {
		return nil, fmt.Errorf("dsmat: value plan: %w", err)
	}
	total := 0
	for q, k := range wanted {
		p.sendCounts[q] = int(k)
		total += int(k)
	}
	idx := make([]int64, total)
	if err := comm.Alltoallv(c, asks, p.recvCounts, idx, p.sendCounts); err != nil {
		return nil, fmt.Errorf("dsmat: value plan: %w", err)
	}
	p.sendIdx = make([]int32, total)
	for k, i := range idx {
		p.sendIdx[k] = int32(i)
	}
	p.send, p.recv = make([]float64, total), make([]float64, len(p.recvPos))
	return p, nil
}

// Move sets dst (the destination positions) from src (this rank's source
// values). Collective. Wrong lengths are a programming error, returned
// before any communication.
func (p *ValuePlan) Move(dst, src []float64) error {
	if len(src) != p.n || len(dst) != p.m {
		return fmt.Errorf("dsmat: move values: %d values into %d, the plan moves %d into %d", len(src), len(dst), p.n, p.m)
	}
	parallel.For(len(p.sendIdx), func(_, lo, hi int) {
		for k, i := range p.sendIdx[lo:hi] {
			p.send[lo+k] = src[i]
		}
	})
	parallel.For(len(p.localPos), func(_, lo, hi int) {
		for k, j := range p.localPos[lo:hi] {
			dst[j] = src[p.localIdx[lo+k]]
		}
	})
	if err := comm.Alltoallv(p.c, p.send, p.sendCounts, p.recv, p.recvCounts); err != nil {
		return fmt.Errorf("dsmat: move values: %w", err)
	}
	parallel.For(len(p.recvPos), func(_, lo, hi int) {
		for k, j := range p.recvPos[lo:hi] {
			dst[j] = p.recv[lo+k]
		}
	})
	return nil
}
