package afsai

import (
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Tags of the two stages of the block collection.
const (
	tagSize = 31 + iota
	tagRows
	tagLens
	tagCols
	tagVals
)

// localSystem is a rank's assembled matrix (A_Ip in the blueprint, section
// 4.3): the rows and columns of every rank in its set S_p, the ranks q <= p
// that the block graph of G, Low(Â^k), connects it to. The stripes are
// placed in rank order, so the rank's own rows come last and local order is
// global order.
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
	// blocks, the entry list and the assembled matrix; its ratio to the
	// assembled matrix alone is what the blueprint quotes as about 1.6.
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

// lowerPart is the part of a rank's stripe that goes into another rank's
// local system: rows (global indices, ascending) and, per row, the entries
// on or below the diagonal whose column owners are in a set.
type lowerPart struct {
	rows []int64
	lens []int32
	cols []int64
	vals []float64
}

// lower collects the entries of this rank's stripe with column <= row whose
// column owner is in set (sorted), from the rows keep marks (all rows when
// keep is nil). Every chunk of rows collects its own part on its own core;
// the parts are joined in row order.
func lower(A *dsmat.Matrix, set []int, keep []bool) lowerPart {
	var left []*dsmat.Block // the blocks of ranks in set below this one
	for k := range A.Off {
		b := &A.Off[k]
		if b.Rank > A.Comm.Rank() {
			break
		}
		if _, in := slices.BinarySearch(set, b.Rank); in {
			left = append(left, b)
		}
	}
	parts := make([]lowerPart, parallel.Chunks(A.LocalRows()))
	parallel.For(A.LocalRows(), func(c, lo, hi int) {
		parts[c] = lowerRows(A, left, keep, lo, hi)
	})
	return joinParts(parts)
}

// lowerRows collects the entries of the kept local rows in [lo, hi) with
// column <= row from the blocks left and the diagonal block.
func lowerRows(A *dsmat.Matrix, left []*dsmat.Block, keep []bool, lo, hi int) lowerPart {
	first := A.First()
	capacity := int(A.Diag.RowPtr[hi]-A.Diag.RowPtr[lo])/2 + hi - lo
	var out lowerPart
	out.cols, out.vals = make([]int64, 0, capacity), make([]float64, 0, capacity)
	for i := lo; i < hi; i++ {
		if keep != nil && !keep[i] {
			continue
		}
		n := len(out.cols)
		for _, b := range left {
			cols, vals := b.Row(i)
			for k, c := range cols {
				out.cols = append(out.cols, b.Cols[c])
				out.vals = append(out.vals, vals[k])
			}
		}
		cols, vals := A.Diag.Row(i)
		for k, c := range cols {
			if int(c) > i {
				break
			}
			out.cols = append(out.cols, first+int64(c))
			out.vals = append(out.vals, vals[k])
		}
		out.rows = append(out.rows, first+int64(i))
		out.lens = append(out.lens, int32(len(out.cols)-n))
	}
	return out
}

// joinParts concatenates the parts of consecutive rows.
func joinParts(parts []lowerPart) lowerPart {
	if len(parts) == 1 {
		return parts[0]
	}
	rows, lens := make([][]int64, len(parts)), make([][]int32, len(parts))
	cols, vals := make([][]int64, len(parts)), make([][]float64, len(parts))
	for k, p := range parts {
		rows[k], lens[k], cols[k], vals[k] = p.rows, p.lens, p.cols, p.vals
	}
	return lowerPart{slices.Concat(rows...), slices.Concat(lens...), slices.Concat(cols...), slices.Concat(vals...)}
}

// reachable marks the rows of this rank's stripe that the local system of
// a rank whose set is set may need when its set-up looks at most reach
// hops from its own rows (nil, all rows, when reach <= 0): the rows within
// reach-1 hops, inside this stripe, of the rows coupled to another rank of
// the set. A path from the other rank's rows through the set's rows enters
// this stripe last at such a row, so every row within reach hops of them
// is marked.
func reachable(A *dsmat.Matrix, set []int, reach int) []bool {
	if reach <= 0 {
		return nil
	}
	keep := make([]bool, A.LocalRows())
	var frontier []int32
	for k := range A.Off {
		b := &A.Off[k]
		if _, in := slices.BinarySearch(set, b.Rank); !in {
			continue
		}
		for _, r := range b.Rows {
			if !keep[r] {
				keep[r] = true
				frontier = append(frontier, r)
			}
		}
	}
	for hop := 1; hop < reach && len(frontier) > 0; hop++ {
		var next []int32
		for _, i := range frontier {
			cols, _ := A.Diag.Row(int(i))
			for _, c := range cols {
				if !keep[c] {
					keep[c] = true
					next = append(next, c)
				}
			}
		}
		frontier = next
	}
	return keep
}

// mirror writes into out the entries of the local system that part b
// gives: every a_ij of b whose column is in the local system, followed by
// a_ji unless it is on the diagonal, in row order. It returns how many it
// wrote. Every chunk of rows finds where its rows start in b and in out,
// then writes its entries there, on its own core.
func mirror(out []csr.Entry[float64], b lowerPart, local func(int64) int32) int {
	k := parallel.Chunks(len(b.lens))
	src := make([]int, k+1) // chunk c reads b from src[c] and writes out from dst[c]
	dst := make([]int, k+1)
	parallel.For(len(b.lens), func(c, lo, hi int) {
		for _, n := range b.lens[lo:hi] {
			src[c+1] += int(n)
		}
	})
	for c := range k {
		src[c+1] += src[c]
	}
	// each walks the chunk's entries and calls write(row, col, value) for
	// those in the local system
	each := func(c, lo, hi int, write func(row, col int32, v float64)) {
		pos := src[c]
		for i, n := range b.lens[lo:hi] {
			row := local(b.rows[lo+i])
			for j := pos; j < pos+int(n); j++ {
				if col := local(b.cols[j]); col >= 0 {
					write(row, col, b.vals[j])
				}
			}
			pos += int(n)
		}
	}
	parallel.For(len(b.lens), func(c, lo, hi int) {
		each(c, lo, hi, func(row, col int32, _ float64) {
			dst[c+1] += 2
			if col == row {
				dst[c+1]--
			}
		})
	})
	for c := range k {
		dst[c+1] += dst[c]
	}
	parallel.For(len(b.lens), func(c, lo, hi int) {
		w := dst[c]
		each(c, lo, hi, func(row, col int32, v float64) {
			out[w] = csr.Entry[float64]{Row: row, Col: col, Val: v}
			w++
			if col != row {
				out[w] = csr.Entry[float64]{Row: col, Col: row, Val: v}
				w++
			}
		})
	})
	return dst[k]
}

// gatherLocal collects the lower blocks of A that this rank's stripe of G
// needs from its left neighbours in Low(Â^power), in two nonblocking stages
// (sizes, then blocks), and assembles the local system, completing the
// upper part by symmetry. With reach > 0 a neighbour sends only the rows of
// its stripe within reach hops of this rank's rows (reachable), which is
// all a set-up that looks at most reach hops from a row needs, and gives
// the G that whole stripes give; reach <= 0 collects whole stripes.
// Collective.
func gatherLocal(A *dsmat.Matrix, power, reach int) (*localSystem, error) {
	c := A.Comm
	np, me := c.Size(), c.Rank()
	g, err := blockGraph(A)
	if err != nil {
		return nil, err
	}
	sets := lowerSets(g, np, power)
	sources := sets[me][:len(sets[me])-1] // the left neighbours; me is last

	// stage 1: sizes (rows, entries). Rank me sends to every p > me whose
	// set holds me.
	var targets []int
	var parts []lowerPart
	for p := me + 1; p < np; p++ {
		if _, in := slices.BinarySearch(sets[p], me); in {
			targets = append(targets, p)
			parts = append(parts, lower(A, sets[p], reachable(A, sets[p], reach)))
		}
	}
	sendSize := comm.NewBuf[int64](2 * len(targets))
	recvSize := comm.NewBuf[int64](2 * len(sources))
	defer sendSize.Free()
	defer recvSize.Free()
	var reqs []*comm.Request
	post := func(r *comm.Request, err error) error {
		if err != nil {
			return fmt.Errorf("afsai: collect blocks: %w", err)
		}
		reqs = append(reqs, r)
		return nil
	}
	for k, q := range sources {
		if err := post(comm.Irecv(c, recvSize.Slice(2*k, 2), q, tagSize)); err != nil {
			return nil, err
		}
	}
	for k, p := range targets {
		sendSize.Data[2*k], sendSize.Data[2*k+1] = int64(len(parts[k].rows)), int64(len(parts[k].cols))
		if err := post(comm.Isend(c, sendSize.Slice(2*k, 2), p, tagSize)); err != nil {
			return nil, err
		}
	}
	if err := comm.Waitall(reqs); err != nil {
		return nil, fmt.Errorf("afsai: collect block sizes: %w", err)
	}

	// stage 2: the blocks
	reqs = reqs[:0]
	type msg struct {
		rows *comm.Buf[int64]
		lens *comm.Buf[int32]
		cols *comm.Buf[int64]
		vals *comm.Buf[float64]
	}
	newMsg := func(rows, nnz int) msg {
		return msg{comm.NewBuf[int64](rows), comm.NewBuf[int32](rows), comm.NewBuf[int64](nnz), comm.NewBuf[float64](nnz)}
	}
	var msgs []msg
	defer func() {
		for _, m := range msgs {
			m.rows.Free()
			m.lens.Free()
			m.cols.Free()
			m.vals.Free()
		}
	}()
	var received int64
	for k, q := range sources {
		m := newMsg(int(recvSize.Data[2*k]), int(recvSize.Data[2*k+1]))
		msgs = append(msgs, m)
		received += 12*int64(len(m.lens.Data)) + 16*int64(len(m.cols.Data))
		for _, err := range []error{
			post(comm.Irecv(c, m.rows, q, tagRows)),
			post(comm.Irecv(c, m.lens, q, tagLens)),
			post(comm.Irecv(c, m.cols, q, tagCols)),
			post(comm.Irecv(c, m.vals, q, tagVals)),
		} {
			if err != nil {
				return nil, err
			}
		}
	}
	for k, p := range targets {
		m := newMsg(len(parts[k].lens), len(parts[k].cols))
		msgs = append(msgs, m)
		copy(m.rows.Data, parts[k].rows)
		copy(m.lens.Data, parts[k].lens)
		copy(m.cols.Data, parts[k].cols)
		copy(m.vals.Data, parts[k].vals)
		for _, err := range []error{
			post(comm.Isend(c, m.rows, p, tagRows)),
			post(comm.Isend(c, m.lens, p, tagLens)),
			post(comm.Isend(c, m.cols, p, tagCols)),
			post(comm.Isend(c, m.vals, p, tagVals)),
		} {
			if err != nil {
				return nil, err
			}
		}
	}
	parts = nil
	if err := comm.Waitall(reqs); err != nil {
		return nil, fmt.Errorf("afsai: collect blocks: %w", err)
	}

	// local numbering: the received rows of the set's ranks, in rank
	// order, then this rank's rows
	set := sets[me]
	recv := make([]lowerPart, len(sources))
	for k := range sources {
		recv[k] = lowerPart{msgs[k].rows.Data, msgs[k].lens.Data, msgs[k].cols.Data, msgs[k].vals.Data}
	}
	nRecv := 0
	for _, b := range recv {
		nRecv += len(b.rows)
	}
	ls := &localSystem{part: A.Part, set: set, index: make([][]int32, len(set)),
		global: make([]int64, nRecv+A.LocalRows()), own: make([]int, A.LocalRows())}
	base := 0 // local index of set[k]'s first row in the local system
	for k, q := range set {
		lo, hi := A.Part.Range(q)
		idx := make([]int32, hi-lo)
		if q == me { // all its rows, on all cores
			parallel.For(len(idx), func(_, a, b int) {
				for i := a; i < b; i++ {
					idx[i], ls.global[base+i], ls.own[i] = int32(base+i), lo+int64(i), base+i
				}
			})
		} else {
			parallel.For(len(idx), func(_, a, b int) {
				for i := a; i < b; i++ {
					idx[i] = -1
				}
			})
			for j, gi := range recv[k].rows {
				idx[gi-lo], ls.global[base+j] = int32(base+j), gi
			}
			base += len(recv[k].rows)
		}
		ls.index[k] = idx
	}
	var entryBytes int64
	ls.A, entryBytes = assemble(A, ls, recv)
	ls.assembledBytes = csrBytes(ls.A)
	ls.peakBytes = received + entryBytes + ls.assembledBytes
	return ls, nil
}

// assemble builds the local system's matrix (both triangles): the received
// rows first, mirrored from their lower parts, then this rank's rows, whose
// diagonal block is A's own, with the couplings between the two on both
// sides. It returns the matrix and the bytes of the entry list it used.
// Without received rows it is A's diagonal block itself, shared: the local
// system is read only.
func assemble(A *dsmat.Matrix, ls *localSystem, recv []lowerPart) (*csr.Matrix[float64], int64) {
	nOwn := A.LocalRows()
	m := len(ls.global)
	nRecv := m - nOwn
	if nRecv == 0 {
		return A.Diag, 0
	}
	total := 0
	for _, b := range recv {
		total += 2 * len(b.cols)
	}
	entries := make([]csr.Entry[float64], total)
	n := 0
	for _, b := range recv {
		n += mirror(entries[n:], b, ls.local)
	}
	r := csr.FromEntries(nRecv, nRecv, entries[:n])
	c := couplings(A, ls, nRecv)
	ct := csr.Transpose(c)

	out := &csr.Matrix[float64]{Rows: m, Cols: m, RowPtr: make([]int32, m+1)}
	for i := range nRecv {
		out.RowPtr[i+1] = out.RowPtr[i] + (r.RowPtr[i+1] - r.RowPtr[i]) + (ct.RowPtr[i+1] - ct.RowPtr[i])
	}
	for i := range nOwn {
		k := nRecv + i
		out.RowPtr[k+1] = out.RowPtr[k] + (c.RowPtr[i+1] - c.RowPtr[i]) + (A.Diag.RowPtr[i+1] - A.Diag.RowPtr[i])
	}
	out.ColIdx, out.Val = make([]int32, out.RowPtr[m]), make([]float64, out.RowPtr[m])
	// put writes row i of b, its columns shifted by shift, into out from at
	put := func(b *csr.Matrix[float64], i int, shift int32, at int32) int32 {
		cols, vals := b.Row(i)
		for j, col := range cols {
			out.ColIdx[at+int32(j)], out.Val[at+int32(j)] = col+shift, vals[j]
		}
		return at + int32(len(cols))
	}
	parallel.For(m, func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			at := out.RowPtr[k]
			if k < nRecv {
				at = put(r, k, 0, at)
				put(ct, k, int32(nRecv), at)
			} else {
				at = put(c, k-nRecv, 0, at)
				put(A.Diag, k-nRecv, int32(nRecv), at)
			}
		}
	})
	return out, 16 * int64(cap(entries))
}

// couplings returns the entries of this rank's rows in the received rows'
// columns (nOwn x nRecv, local column numbers): from the left blocks of the
// set, in rank order, which is ascending local order.
func couplings(A *dsmat.Matrix, ls *localSystem, nRecv int) *csr.Matrix[float64] {
	var left []*dsmat.Block
	for k := range A.Off {
		b := &A.Off[k]
		if _, in := slices.BinarySearch(ls.set, b.Rank); in && b.Rank < A.Comm.Rank() {
			left = append(left, b)
		}
	}
	nOwn := A.LocalRows()
	c := &csr.Matrix[float64]{Rows: nOwn, Cols: nRecv, RowPtr: make([]int32, nOwn+1)}
	// each visits the kept couplings of own row i
	each := func(i int, f func(col int32, v float64)) {
		for _, b := range left {
			cols, vals := b.Row(i)
			for j, cc := range cols {
				if lc := ls.local(b.Cols[cc]); lc >= 0 {
					f(lc, vals[j])
				}
			}
		}
	}
	parallel.For(nOwn, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			each(i, func(int32, float64) { c.RowPtr[i+1]++ })
		}
	})
	for i := range nOwn {
		c.RowPtr[i+1] += c.RowPtr[i]
	}
	c.ColIdx, c.Val = make([]int32, c.RowPtr[nOwn]), make([]float64, c.RowPtr[nOwn])
	parallel.For(nOwn, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			at := c.RowPtr[i]
			each(i, func(col int32, v float64) {
				c.ColIdx[at], c.Val[at] = col, v
				at++
			})
		}
	})
	return c
}

// local returns the local index of global row gi, -1 when the local
// system does not hold it.
func (ls *localSystem) local(gi int64) int32 {
	q := ls.part.Owner(gi)
	k, in := slices.BinarySearch(ls.set, q)
	if !in {
		return -1
	}
	lo, _ := ls.part.Range(q)
	return ls.index[k][gi-lo]
}

// csrBytes is the memory of a float64 CSR block.
func csrBytes(a *csr.Matrix[float64]) int64 {
	return 4*int64(len(a.RowPtr)) + 12*int64(a.NNZ())
}
