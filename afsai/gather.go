package afsai

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Tags of the messages of the block collection.
const (
	tagAskCount = 31 + iota // how many rows a rank asks an owner for
	tagAsk                  // those rows, with their distances
	tagSize                 // how many rows and entries an owner sends
	tagRows
	tagLens
	tagCols
	tagVals
)

// Marks of a row of the set's stripes, during the collection, in place of
// its index among the held rows.
const (
	notHeld = -1 // neither held nor asked for
	asked   = -2 // asked for in this round
)

// localSystem is a rank's assembled matrix (A_Ip in the blueprint, section
// 4.3): rows and columns of the ranks in its set S_p, the ranks q <= p that
// the block graph of G, Low(Â^k), connects it to: all its own rows and,
// of the other ranks' rows, those its set-up may look at. The rows are
// placed in global order, so the rank's own rows come last and local order
// is global order.
type localSystem struct {
	A      *csr.Matrix[float64] // both triangles
	global []int64              // global index of each local row and column
	own    []int                // local indices of the rank's own rows
	// the local index of row i of set[k]'s stripe is index[k][i] (-1: not
	// collected); local looks it up
	part  dsmat.Partition
	set   []int
	index [][]int32
	// peakBytes is the most memory the collection held at once: the received
	// rows and the assembled matrix; its ratio to the assembled matrix alone
	// is what the blueprint quotes as about 1.6.
	peakBytes, assembledBytes int64
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
// reduction finds nothing more to ask. reach <= 0 collects whole stripes,
// in one exchange. Collective.
func gatherLocal(A *dsmat.Matrix, power, reach int) (*localSystem, error) {
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
	defer x.free()
	out := make([][]int32, len(targets)) // the rows each target gets
	if reach <= 0 {
		all := make([]int32, A.LocalRows())
		for i := range all {
			all[i] = int32(i)
		}
		for k := range out {
			out[k] = all
		}
		if err := x.exchangeRows(out); err != nil {
			return nil, err
		}
		return x.assemble(), nil
	}
	for {
		asks := x.asks(reach)
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
			return x.assemble(), nil
		}
		// after a failure, send nothing and fail at the next reduction
		var got [][]int64
		got, err = x.exchangeAsks(asks)
		for k := range targets {
			out[k] = nil
			if err == nil {
				out[k], err = x.serve(k, got[k], reach)
			}
		}
		if xerr := x.exchangeRows(out); err == nil {
			err = xerr
		}
	}
}

// collection is a rank's state during the block collection: as a collector,
// the local system it builds and the rows of the set's ranks it holds; as an
// owner, what it has sent to the ranks whose sets hold it.
type collection struct {
	A       *dsmat.Matrix
	sets    [][]int
	sources []int // the set's ranks but this one, which is last in the set
	targets []int // the ranks whose sets hold this one
	// ls.index[k] is, during the collection, the held slot of each row of
	// sources[k]'s stripe, or notHeld or asked; assemble turns it into
	// local indices
	ls   *localSystem
	held []heldRow
	msgs []rowMsg // the received rows; held rows lie in them
	sent [][]bool // per target, the rows of this stripe sent to it
	dist []int32  // per row of this stripe, its distance in serve's search; -1 outside
}

// heldRow is where a held row's entries lie: in msgs[msg], n of them from
// at on.
type heldRow struct {
	msg, n int32
	at     int64
}

// newCollection starts a collection with nothing held.
func newCollection(A *dsmat.Matrix, sets [][]int, targets []int) *collection {
	set := sets[A.Comm.Rank()]
	x := &collection{A: A, sets: sets, sources: set[:len(set)-1], targets: targets,
		ls:   &localSystem{part: A.Part, set: set, index: make([][]int32, len(set))},
		sent: make([][]bool, len(targets))}
	for k, q := range x.sources {
		idx := make([]int32, A.Part.Size(q))
		parallel.For(len(idx), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				idx[i] = notHeld
			}
		})
		x.ls.index[k] = idx
	}
	return x
}

// free releases the received rows.
func (x *collection) free() {
	for _, m := range x.msgs {
		m.free()
	}
}

// row returns the columns (global) and values of held row s.
func (x *collection) row(s int32) ([]int64, []float64) {
	h := x.held[s]
	m := x.msgs[h.msg]
	end := h.at + int64(h.n)
	return m.cols.Data[h.at:end], m.vals.Data[h.at:end]
}

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
		case s >= 0:
			if atomic.CompareAndSwapInt32(&level[s], -1, d) {
				f.next = append(f.next, s)
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
		parts[c].asks = make([][]int64, len(x.sources))
		for j := lo; j < hi; j++ {
			visit(&parts[c], j)
		}
	})
	return parts
}

// serve returns the rows of this stripe, ascending, that target k has not
// been sent and that lie within reach of the rows it asks for (pairs of
// global row and distance): within reach minus an asked row's distance
// hops of it, inside this stripe. It marks them sent. Every level of the
// search is spread over the cores.
func (x *collection) serve(k int, ask []int64, reach int) ([]int32, error) {
	first, n := x.A.First(), x.A.LocalRows()
	if len(ask)%2 != 0 {
		return nil, fmt.Errorf("afsai: collect rows: rank %d asked for %d numbers, want pairs", x.targets[k], len(ask))
	}
	if x.sent[k] == nil {
		x.sent[k] = make([]bool, n)
	}
	if x.dist == nil {
		x.dist = make([]int32, n)
		parallel.For(n, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				x.dist[i] = -1
			}
		})
	}
	dist, sent := x.dist, x.sent[k]
	lvls := make([][]int32, reach+1) // the rows by distance; those reached closer since are skipped
	// relax lowers row i's distance to d, if that is lower, and reports
	// whether it did
	relax := func(i, d int32) bool {
		for {
			old := atomic.LoadInt32(&dist[i])
			if old >= 0 && old <= d {
				return false
			}
			if atomic.CompareAndSwapInt32(&dist[i], old, d) {
				return true
			}
		}
	}
	for j := 0; j < len(ask); j += 2 {
		i, d := ask[j]-first, ask[j+1]
		if i < 0 || i >= int64(n) || d < 1 || d > int64(reach) {
			return nil, fmt.Errorf("afsai: collect rows: rank %d asked for row %d at distance %d, outside this stripe or the reach %d", x.targets[k], ask[j], d, reach)
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
			p := &parts[c]
			for _, i := range level[lo:hi] {
				if atomic.LoadInt32(&dist[i]) != d { // reached closer since
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
		})
		for _, p := range parts {
			out = append(out, p.out...)
			if d < int32(reach) {
				lvls[d+1] = append(lvls[d+1], p.next...)
			}
		}
	}
	for _, level := range lvls {
		for _, i := range level {
			dist[i] = -1
		}
	}
	slices.Sort(out)
	return out, nil
}

// exchangeAsks sends every source the rows this rank asks it for and
// returns the rows every target asks for: counts first, then the pairs.
func (x *collection) exchangeAsks(asks [][]int64) ([][]int64, error) {
	ns, nt := len(x.sources), len(x.targets)
	counts := comm.NewBuf[int64](ns + nt) // sent to the sources, then received from the targets
	defer counts.Free()
	ms := messages{c: x.A.Comm}
	for k, q := range x.sources {
		counts.Data[k] = int64(len(asks[k]))
		send(&ms, counts.Slice(k, 1), q, tagAskCount)
	}
	for k, p := range x.targets {
		recv(&ms, counts.Slice(ns+k, 1), p, tagAskCount)
	}
	if err := ms.wait("ask counts"); err != nil {
		return nil, err
	}
	bufs := make([]*comm.Buf[int64], ns+nt)
	defer func() {
		for _, b := range bufs {
			if b != nil {
				b.Free()
			}
		}
	}()
	for k, q := range x.sources {
		bufs[k] = comm.NewBuf[int64](len(asks[k]))
		copy(bufs[k].Data, asks[k])
		send(&ms, bufs[k], q, tagAsk)
	}
	for k, p := range x.targets {
		n := counts.Data[ns+k]
		if n < 0 {
			return nil, fmt.Errorf("afsai: collect rows: rank %d asks for %d numbers", p, n)
		}
		bufs[ns+k] = comm.NewBuf[int64](int(n))
		recv(&ms, bufs[ns+k], p, tagAsk)
	}
	if err := ms.wait("asks"); err != nil {
		return nil, err
	}
	got := make([][]int64, nt)
	for k := range got {
		got[k] = slices.Clone(bufs[ns+k].Data)
	}
	return got, nil
}

// exchangeRows sends every target k the rows out[k] of this stripe, packed
// for its set, and receives and holds the rows the sources send: sizes
// first, then the rows.
func (x *collection) exchangeRows(out [][]int32) error {
	ns, nt := len(x.sources), len(x.targets)
	sizes := comm.NewBuf[int64](2 * (nt + ns)) // sent to the targets, then received from the sources
	defer sizes.Free()
	packs := make([]rowMsg, nt)
	defer func() {
		for _, m := range packs {
			m.free()
		}
	}()
	ms := messages{c: x.A.Comm}
	for k, q := range x.sources {
		recv(&ms, sizes.Slice(2*(nt+k), 2), q, tagSize)
	}
	for k, p := range x.targets {
		packs[k] = pack(x.A, x.sets[p], out[k])
		sizes.Data[2*k], sizes.Data[2*k+1] = int64(len(out[k])), int64(len(packs[k].cols.Data))
		send(&ms, sizes.Slice(2*k, 2), p, tagSize)
	}
	if err := ms.wait("sizes"); err != nil {
		return err
	}
	first := len(x.msgs)
	for k, q := range x.sources {
		rows, nnz := sizes.Data[2*(nt+k)], sizes.Data[2*(nt+k)+1]
		if rows < 0 || nnz < 0 {
			return fmt.Errorf("afsai: collect rows: rank %d sends %d rows of %d entries", q, rows, nnz)
		}
		m := newRowMsg(int(rows), int(nnz))
		x.msgs = append(x.msgs, m)
		m.recv(&ms, q)
	}
	for k, p := range x.targets {
		packs[k].send(&ms, p)
	}
	if err := ms.wait("rows"); err != nil {
		return err
	}
	for k := range x.sources {
		if err := x.hold(k, first+k); err != nil {
			return err
		}
	}
	return nil
}

// hold records the rows of message msgs[j], from sources[k], as held.
func (x *collection) hold(k, j int) error {
	q, m := x.sources[k], x.msgs[j]
	lo, hi := x.A.Part.Range(q)
	idx := x.ls.index[k]
	var at int64
	for r, gi := range m.rows.Data {
		n := int64(m.lens.Data[r])
		if gi < lo || gi >= hi || idx[gi-lo] >= 0 || n < 0 || at+n > int64(len(m.cols.Data)) {
			return fmt.Errorf("afsai: collect rows: rank %d sent row %d (%d entries): outside its stripe, sent before, or past the message", q, gi, n)
		}
		idx[gi-lo] = int32(len(x.held))
		x.held = append(x.held, heldRow{msg: int32(j), n: int32(n), at: at})
		at += n
	}
	if at != int64(len(m.cols.Data)) {
		return fmt.Errorf("afsai: collect rows: rank %d sent %d entries, its rows hold %d", q, len(m.cols.Data), at)
	}
	return nil
}

// assemble numbers the held rows in global order, before this rank's rows,
// and builds the local system's matrix: each held row's entries in the local
// system's columns, then this rank's rows, their entries in the held
// columns (from the left blocks) followed by the diagonal block. Without
// held rows it is A's diagonal block itself, shared: the local system is
// read only.
func (x *collection) assemble() *localSystem {
	A, ls := x.A, x.ls
	nOwn, nRecv := A.LocalRows(), len(x.held)
	m := nRecv + nOwn
	ls.global, ls.own = make([]int64, m), make([]int, nOwn)
	order := make([]int32, nRecv) // the held slot of each received local row
	base := 0
	for k, q := range x.sources {
		lo, _ := A.Part.Range(q)
		base = number(ls.index[k], lo, base, order, ls.global)
	}
	own := make([]int32, nOwn)
	parallel.For(nOwn, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			own[i], ls.global[nRecv+i], ls.own[i] = int32(nRecv+i), A.First()+int64(i), nRecv+i
		}
	})
	ls.index[len(x.sources)] = own

	var received int64
	for _, msg := range x.msgs {
		received += msg.bytes()
	}
	if nRecv == 0 {
		ls.A = A.Diag
	} else {
		ls.A = x.matrix(order)
	}
	ls.assembledBytes = csrBytes(ls.A)
	ls.peakBytes = received + ls.assembledBytes
	return ls
}

// number gives the held rows of a stripe whose first row is lo local
// indices from base on, in stripe order, in place of their slots in idx
// (-1 for the others); it records each one's slot in order and global index
// in global. It returns the next free local index. Every chunk of the stripe
// counts its held rows, then numbers them, on its own core.
func number(idx []int32, lo int64, base int, order []int32, global []int64) int {
	k := parallel.Chunks(len(idx))
	start := make([]int, k+1) // chunk c numbers from start[c]
	start[0] = base
	parallel.For(len(idx), func(c, a, b int) {
		for _, s := range idx[a:b] {
			if s >= 0 {
				start[c+1]++
			}
		}
	})
	for c := range k {
		start[c+1] += start[c]
	}
	parallel.For(len(idx), func(c, a, b int) {
		l := start[c]
		for i := a; i < b; i++ {
			if s := idx[i]; s >= 0 {
				order[l], global[l], idx[i] = s, lo+int64(i), int32(l)
				l++
			} else {
				idx[i] = -1
			}
		}
	})
	return start[k]
}

// matrix builds the local system's matrix once the rows are numbered;
// order is the held slot of each received row. Every chunk of rows counts,
// then copies, its entries on its own core; the held rows' columns are
// turned into local indices (-1 outside the local system) in place as they
// are counted.
func (x *collection) matrix(order []int32) *csr.Matrix[float64] {
	A, ls := x.A, x.ls
	nOwn, nRecv := A.LocalRows(), len(order)
	m := nRecv + nOwn
	var left []*dsmat.Block // the left blocks of the set, with their columns' local indices
	var leftCols [][]int32
	for k := range A.Off {
		b := &A.Off[k]
		if _, in := slices.BinarySearch(ls.set, b.Rank); in && b.Rank < A.Comm.Rank() {
			lc := make([]int32, len(b.Cols))
			for j, gi := range b.Cols {
				lc[j] = ls.local(gi)
			}
			left, leftCols = append(left, b), append(leftCols, lc)
		}
	}
	out := &csr.Matrix[float64]{Rows: m, Cols: m, RowPtr: make([]int32, m+1)}
	parallel.For(nRecv, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			cols, _ := x.row(order[j])
			n := int32(0)
			for e, gi := range cols {
				l := ls.local(gi)
				if l >= 0 {
					n++
				}
				cols[e] = int64(l)
			}
			out.RowPtr[j+1] = n
		}
	})
	parallel.For(nOwn, func(_, lo, hi int) {
		cur := newCursors(left, lo)
		for i := lo; i < hi; i++ {
			n := A.Diag.RowPtr[i+1] - A.Diag.RowPtr[i]
			for k := range left {
				cols, _ := cur.row(k, i)
				for _, c := range cols {
					if leftCols[k][c] >= 0 {
						n++
					}
				}
			}
			out.RowPtr[nRecv+i+1] = n
		}
	})
	for i := range m {
		out.RowPtr[i+1] += out.RowPtr[i]
	}
	out.ColIdx, out.Val = make([]int32, out.RowPtr[m]), make([]float64, out.RowPtr[m])
	parallel.For(nRecv, func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			at := out.RowPtr[j]
			cols, vals := x.row(order[j])
			for e, l := range cols {
				if l >= 0 {
					out.ColIdx[at], out.Val[at] = int32(l), vals[e]
					at++
				}
			}
		}
	})
	parallel.For(nOwn, func(_, lo, hi int) {
		cur := newCursors(left, lo)
		for i := lo; i < hi; i++ {
			at := out.RowPtr[nRecv+i]
			for k := range left {
				cols, vals := cur.row(k, i)
				for j, c := range cols {
					if l := leftCols[k][c]; l >= 0 {
						out.ColIdx[at], out.Val[at] = l, vals[j]
						at++
					}
				}
			}
			cols, vals := A.Diag.Row(i)
			for j, c := range cols {
				out.ColIdx[at], out.Val[at] = c+int32(nRecv), vals[j]
				at++
			}
		}
	})
	return out
}

// rowMsg is a list of rows of a stripe as a rank's local system takes them:
// global row indices and, per row, its entries in the columns of the ranks
// of that rank's set (global column indices, ascending) and their values.
type rowMsg struct {
	rows *comm.Buf[int64]
	lens *comm.Buf[int32]
	cols *comm.Buf[int64]
	vals *comm.Buf[float64]
}

func newRowMsg(rows, nnz int) rowMsg {
	return rowMsg{comm.NewBuf[int64](rows), comm.NewBuf[int32](rows), comm.NewBuf[int64](nnz), comm.NewBuf[float64](nnz)}
}

func (m rowMsg) free() {
	for _, f := range []func(){m.rows.Free, m.lens.Free, m.cols.Free, m.vals.Free} {
		f()
	}
}

// bytes is the memory of the message.
func (m rowMsg) bytes() int64 {
	return 12*int64(len(m.rows.Data)) + 16*int64(len(m.cols.Data))
}

// send posts the sending of m to rank to.
func (m rowMsg) send(ms *messages, to int) {
	send(ms, m.rows, to, tagRows)
	send(ms, m.lens, to, tagLens)
	send(ms, m.cols, to, tagCols)
	send(ms, m.vals, to, tagVals)
}

// recv posts the receiving of m from rank from.
func (m rowMsg) recv(ms *messages, from int) {
	recv(ms, m.rows, from, tagRows)
	recv(ms, m.lens, from, tagLens)
	recv(ms, m.cols, from, tagCols)
	recv(ms, m.vals, from, tagVals)
}

// pack puts rows of this stripe (local indices) into a message for a rank
// whose set is set: each row's entries in the columns of the set's ranks,
// in column order: the left blocks, the diagonal block, the right blocks.
// Every chunk of rows counts, then copies, its entries on its own core.
func pack(A *dsmat.Matrix, set []int, rows []int32) rowMsg {
	var blocks []*dsmat.Block
	for k := range A.Off {
		if _, in := slices.BinarySearch(set, A.Off[k].Rank); in {
			blocks = append(blocks, &A.Off[k])
		}
	}
	nLeft, _ := slices.BinarySearchFunc(blocks, A.Comm.Rank(), func(b *dsmat.Block, r int) int { return b.Rank - r })
	if len(rows) == 0 { // every chunk below starts at a row
		return newRowMsg(0, 0)
	}
	first := A.First()
	m := rowMsg{rows: comm.NewBuf[int64](len(rows)), lens: comm.NewBuf[int32](len(rows))}
	k := parallel.Chunks(len(rows))
	start := make([]int, k+1) // chunk c writes from start[c]
	parallel.For(len(rows), func(c, lo, hi int) {
		cur := newCursors(blocks, int(rows[lo]))
		for r := lo; r < hi; r++ {
			i := int(rows[r])
			n := A.Diag.RowPtr[i+1] - A.Diag.RowPtr[i]
			for bk := range blocks {
				cols, _ := cur.row(bk, i)
				n += int32(len(cols))
			}
			m.rows.Data[r], m.lens.Data[r] = first+int64(i), n
			start[c+1] += int(n)
		}
	})
	for c := range k {
		start[c+1] += start[c]
	}
	m.cols, m.vals = comm.NewBuf[int64](start[k]), comm.NewBuf[float64](start[k])
	parallel.For(len(rows), func(c, lo, hi int) {
		at := start[c]
		put := func(gi int64, v float64) {
			m.cols.Data[at], m.vals.Data[at] = gi, v
			at++
		}
		cur := newCursors(blocks, int(rows[lo]))
		putBlocks := func(from, to, i int) {
			for bk := from; bk < to; bk++ {
				cols, vals := cur.row(bk, i)
				for j, c := range cols {
					put(blocks[bk].Cols[c], vals[j])
				}
			}
		}
		for _, i := range rows[lo:hi] {
			putBlocks(0, nLeft, int(i))
			cols, vals := A.Diag.Row(int(i))
			for j, c := range cols {
				put(first+int64(c), vals[j])
			}
			putBlocks(nLeft, len(blocks), int(i))
		}
	})
	return m
}

// cursors walk the stored rows of blocks in ascending order, so that
// visiting rows in order costs no search per block and row.
type cursors struct {
	blocks []*dsmat.Block
	at     []int // per block, the first stored row not passed yet
}

// newCursors starts cursors on blocks at local row lo.
func newCursors(blocks []*dsmat.Block, lo int) cursors {
	cur := cursors{blocks, make([]int, len(blocks))}
	for k, b := range blocks {
		cur.at[k], _ = slices.BinarySearch(b.Rows, int32(lo))
	}
	return cur
}

// row returns the compact columns and values of local row i in block k,
// empty when the block has none; i must not be below the last row asked.
func (cur cursors) row(k, i int) ([]int32, []float64) {
	b, p := cur.blocks[k], cur.at[k]
	for p < len(b.Rows) && int(b.Rows[p]) < i {
		p++
	}
	cur.at[k] = p
	if p < len(b.Rows) && int(b.Rows[p]) == i {
		return b.A.Row(p)
	}
	return nil, nil
}

// messages is one stage of nonblocking sends and receives: post them with
// send and recv, then wait for all. After a failed post it posts nothing
// more, and wait still completes the ones posted before returning the
// error.
type messages struct {
	c    *comm.Comm
	reqs []*comm.Request
	err  error
}

func send[T comm.Elem](ms *messages, b *comm.Buf[T], to, tag int) {
	if ms.err == nil {
		r, err := comm.Isend(ms.c, b, to, tag)
		ms.add(r, err)
	}
}

func recv[T comm.Elem](ms *messages, b *comm.Buf[T], from, tag int) {
	if ms.err == nil {
		r, err := comm.Irecv(ms.c, b, from, tag)
		ms.add(r, err)
	}
}

func (ms *messages) add(r *comm.Request, err error) {
	if err != nil {
		ms.err = err
		return
	}
	ms.reqs = append(ms.reqs, r)
}

// wait completes the posted messages of the stage named what.
func (ms *messages) wait(what string) error {
	err := comm.Waitall(ms.reqs)
	ms.reqs = ms.reqs[:0]
	if ms.err != nil {
		err, ms.err = ms.err, nil
	}
	if err != nil {
		return fmt.Errorf("afsai: collect rows: %s: %w", what, err)
	}
	return nil
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

// local returns the local index of global row gi, -1 when the local
// system does not hold it.
func (ls *localSystem) local(gi int64) int32 {
	k, i := ls.find(gi)
	if k < 0 {
		return -1
	}
	return ls.index[k][i]
}

// csrBytes is the memory of a float64 CSR block.
func csrBytes(a *csr.Matrix[float64]) int64 {
	return 4*int64(len(a.RowPtr)) + 12*int64(a.NNZ())
}
