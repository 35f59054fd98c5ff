package afsai

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// localSystem is a rank's assembled matrix (A_Ip in the blueprint, section
// 4.3): rows and columns of the ranks in its set S_p, the ranks q <= p that
// the block graph of G, Low(Â^k), connects it to: all its own rows and,
// of the other ranks' rows, those its set-up may look at. The rows are
// placed in global order, so the rank's own rows come last and local order
// is global order.
type localSystem struct {
	// the matrix, both triangles: A in double precision, or, for a
	// single-precision set-up, split in single precision (its border, and
	// A's diagonal block as it is), joined into A32 only where the CPU
	// computes (matrix32)
	A     *csr.Matrix[float64]
	split *Split
	A32   *csr.Matrix[float32]
	// held is the global index of each received local row and column,
	// the first len(held); the rank's nOwn own rows follow them, from
	// global row first on (ownRows lists them, globals all the indices)
	held  []int64
	first int64
	nOwn  int
	// the local index of row i of set[k]'s stripe is index[k][i] (-1: not
	// collected); local looks it up
	part  dsmat.Partition
	set   []int
	index [][]int32
	// peakBytes is the most memory the collection held at once: the received
	// rows and the assembled matrix; its ratio to the assembled matrix alone
	// is what the blueprint quotes as about 1.6.
	peakBytes, assembledBytes int64
	// incomplete marks the received rows that lost entries in the columns of
	// the set's ranks (rows at the edge of the reach); nil when none did
	incomplete []bool
}

// ownRows returns the local indices of the rank's own rows, made on demand:
// a set-up on a device does without the list, millions of entries long.
func (ls *localSystem) ownRows() []int {
	m := len(ls.held) + ls.nOwn
	own := make([]int, ls.nOwn)
	parallel.For(len(own), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			own[k] = m - ls.nOwn + k
		}
	})
	return own
}

// globals returns the global index of every local row and column, made on
// demand: the own rows' part is millions of entries long, which only a
// factor set up on the host needs (dsmat.NewLocal).
func (ls *localSystem) globals() []int64 {
	g := make([]int64, len(ls.held)+ls.nOwn)
	parallel.Copy(g[:len(ls.held)], ls.held)
	own := g[len(ls.held):]
	parallel.For(len(own), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			own[i] = ls.first + int64(i)
		}
	})
	return g
}

// global returns the global index of local row i.
func (ls *localSystem) global(i int) int64 {
	if i < len(ls.held) {
		return ls.held[i]
	}
	return ls.first + int64(i-len(ls.held))
}

// named turns a DiagonalError about a row of the local system into one that
// names the entry by its global row, counting from 1 as Matrix Market and
// the command line do; other errors pass unchanged.
func (ls *localSystem) named(err error) error {
	var de *diagonalError
	if ls == nil || !errors.As(err, &de) {
		return err
	}
	g := ls.global(de.row) + 1
	return fmt.Errorf("afsai: diagonal entry A(%d,%d) = %g is not positive and finite: the matrix is not SPD", g, g, de.d)
}

// find returns the position in set of the rank that owns global row gi and
// gi's index in its stripe; k is -1 when no rank of the set owns it.
func (ls *localSystem) find(gi int64) (k int, i int64) {
	off, set := ls.part.Offsets, ls.set
	lo, hi := 0, len(set) // the first rank of the set whose stripe ends after gi
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if off[set[m]+1] > gi {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == len(set) || off[set[lo]] > gi {
		return -1, 0
	}
	return lo, gi - off[set[lo]]
}

// size returns the rows and entries of the local system.
func (ls *localSystem) size() (rows, nnz int) {
	if ls.split != nil {
		return ls.split.Size()
	}
	return ls.A.Rows, ls.A.NNZ()
}

// matrix32 returns the single-precision system joined, joining it on first
// use.
func (ls *localSystem) matrix32() *csr.Matrix[float32] {
	if ls.A32 == nil {
		ls.A32 = ls.split.Join()
	}
	return ls.A32
}

// local returns the local index of global row gi, -1 when the local
// system does not hold it.
func (ls *localSystem) local(gi int64) int32 {
	l, _ := ls.lookup(gi)
	return l
}

// lookup is local that also reports whether a rank of the set owns gi: a
// row of the set that the local system does not hold lies past the reach.
func (ls *localSystem) lookup(gi int64) (l int32, inSet bool) {
	k, i := ls.find(gi)
	switch {
	case k < 0:
		return -1, false
	case k == len(ls.set)-1: // this rank's own rows, after the received ones
		return int32(len(ls.held) + int(i)), true
	}
	if e := ls.index[k][i]; e > 0 {
		return e - 1, true
	}
	return -1, true
}

// complete reports whether every row of g, this rank's stripe of G in the
// local numbering (at least its entries in the received rows' columns),
// draws only on received rows that kept all their entries in the set's
// ranks: then g is the G of whole stripes. A row's pattern only grows, and
// the set-up reads A's rows at the pattern's columns and at the row itself
// (an own row, always whole): the Kaporin gradient over their entries, the
// dense system between them. Where those rows are whole, every candidate
// the set-up could rank is in the local system with its true gradient, so
// the set-up takes the steps it takes on whole stripes.
func (ls *localSystem) complete(g *csr.Matrix[float64]) bool {
	if ls.incomplete == nil {
		return true
	}
	bad := make([]bool, parallel.Chunks(len(g.ColIdx)))
	parallel.For(len(g.ColIdx), func(c, lo, hi int) {
		for _, col := range g.ColIdx[lo:hi] {
			if int(col) < len(ls.incomplete) && ls.incomplete[col] {
				bad[c] = true
				return
			}
		}
	})
	return !slices.Contains(bad, true)
}

// blockGraph returns Â, the np x np block graph of A (row-major, 1 where
// block pq holds a nonzero), known to every rank.
func blockGraph(A *dsmat.Matrix) ([]uint8, error) {
	c := A.Comm
	np, me := c.Size(), c.Rank()
	g := make([]uint8, np*np)
	g[me*np+me] = 1
	for _, b := range A.Off {
		g[me*np+b.Rank] = 1
	}
	if err := comm.Allreduce(c, comm.Max, g); err != nil {
		return nil, fmt.Errorf("afsai: block graph: %w", err)
	}
	return g, nil
}

// lowerSets returns, for every rank p, S_p: the ranks q <= p with
// (Â^power)_pq nonzero, ascending. It is the block pattern of G's stripe p.
func lowerSets(g []uint8, np, power int) [][]int {
	sets := make([][]int, np)
	seen := make([]int, np) // the p+1 that last reached each rank
	for p := 0; p < np; p++ {
		seen[p] = p + 1
		frontier := []int{p}
		for step := 0; step < power; step++ {
			var next []int
			for _, q := range frontier {
				for r := 0; r < np; r++ {
					if g[q*np+r] != 0 && seen[r] != p+1 {
						seen[r] = p + 1
						next = append(next, r)
					}
				}
			}
			frontier = next
		}
		for q := 0; q <= p; q++ {
			if seen[q] == p+1 {
				sets[p] = append(sets[p], q)
			}
		}
	}
	return sets
}

// gatherLocal collects the rows of A that this rank's stripe of G may need
// from its left neighbours in Low(Â^power) and assembles the local system.
//
// With reach > 0 it holds exactly the rows of the set's ranks within reach
// hops of its own rows in the graph of A restricted to the rows of the
// set's ranks: all that a set-up looking at most reach hops from a row
// can see, so it gives the G that whole stripes give. It finds them in
// rounds of a breadth-first search (asks): it asks the owners for the rows
// it reaches but does not hold, with their distances, and each owner sends
// those rows and the rows of its stripe within the rest of the reach from
// them, found by a search inside its stripe (serve). When the rows within
// reach lie in the stripe of the neighbour next to this rank's rows, one
// round fetches them all; each further change of stripe along a shortest
// path may take one more, and reach rounds always fetch all. Each round is
// one collective reduction and sparse point-to-point messages; a last
// reduction finds nothing more to ask. A rank searches again only when an
// owner says that a row it sent short of the reach has entries in the
// stripe of another of the set's ranks: paths from the rank's rows that
// stay in one owner's stripe were all followed by that owner's search.
// reach <= 0 collects whole stripes,
// in one exchange. The system is assembled in precision p (A or A32).
// With ask false the rank only serves the others: it asks for no rows and
// gets no system (nil). Collective.
func gatherLocal(A *dsmat.Matrix, power, reach int, p backend.Precision, ask bool) (*localSystem, error) {
	c := A.Comm
	np, me := c.Size(), c.Rank()
	g, err := blockGraph(A)
	if err != nil {
		return nil, err
	}
	sets := lowerSets(g, np, power)
	var targets []int // the ranks whose sets hold this one
	for p := me + 1; p < np; p++ {
		if _, in := slices.BinarySearch(sets[p], me); in {
			targets = append(targets, p)
		}
	}
	x := newCollection(A, sets, targets)
	x.single = p == backend.Single
	defer x.free()
	out := make([][]int32, len(targets))  // the rows each target gets
	further := make([]bool, len(targets)) // whether it should search again
	if reach <= 0 {
		all := make([]int32, A.LocalRows())
		for i := range all {
			all[i] = int32(i)
		}
		for k := range out {
			out[k] = all
		}
		if err := x.exchangeRows(out, make([]bool, len(out))); err != nil {
			return nil, err
		}
		return x.assemble(ask)
	}
	for round := 0; ; round++ {
		// Unless a path leaves an owner's stripe for another's, the first
		// round fetches all: a shortest path enters the stripe it ends
		// in from one of this rank's rows, next to a row asked for at
		// distance 1, whose owner sent the rows within reach-1 of it in
		// its stripe. A later round's search, which took 8 ms of two
		// ranks' set-up of diffusion:200 and 40 ms of four ranks' of
		// poisson7:400 on H200 GPUs, would find nothing.
		asks := make([][]int64, len(x.sources))
		if ask && (round == 0 || x.further) {
			asks = x.asks(reach)
		}
		// stop together: when nobody asks for rows, or when a rank failed
		// in the last round
		state := []int64{0, 0}
		for _, a := range asks {
			state[0] += int64(len(a))
		}
		if err != nil {
			state[1] = 1
		}
		if rerr := comm.Allreduce(c, comm.Max, state); rerr != nil {
			return nil, fmt.Errorf("afsai: collect rows: %w", rerr)
		}
		switch {
		case err != nil:
			return nil, err
		case state[1] != 0:
			return nil, comm.ErrPeer
		case state[0] == 0:
			return x.assemble(ask)
		}
		// after a failure, send nothing and fail at the next reduction
		var got [][]int64
		got, err = x.exchangeAsks(asks)
		for k := range targets {
			out[k], further[k] = nil, false
			if err == nil {
				out[k], further[k], err = x.serve(k, got[k], reach)
			}
		}
		if xerr := x.exchangeRows(out, further); err == nil {
			err = xerr
		}
	}
}
