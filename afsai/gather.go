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
// local system: per row, the entries on or below the diagonal whose column
// owners are in a set.
type lowerPart struct {
	lens []int32
	cols []int64
	vals []float64
}

// lower collects the entries of this rank's stripe with column <= row whose
// column owner is in set (sorted). Every chunk of rows collects its own part
// on its own core; the parts are joined in row order.
func lower(A *dsmat.Matrix, set []int) lowerPart {
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
		parts[c] = lowerRows(A, left, lo, hi)
	})
	return joinParts(parts)
}

// lowerRows collects the entries of local rows [lo, hi) with column <= row
// from the blocks left and the diagonal block.
func lowerRows(A *dsmat.Matrix, left []*dsmat.Block, lo, hi int) lowerPart {
	first := A.First()
	capacity := int(A.Diag.RowPtr[hi]-A.Diag.RowPtr[lo])/2 + hi - lo
	out := lowerPart{lens: make([]int32, hi-lo),
		cols: make([]int64, 0, capacity), vals: make([]float64, 0, capacity)}
	for i := lo; i < hi; i++ {
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
		out.lens[i-lo] = int32(len(out.cols) - n)
	}
	return out
}

// joinParts concatenates the parts of consecutive rows.
func joinParts(parts []lowerPart) lowerPart {
	if len(parts) == 1 {
		return parts[0]
	}
	lens, cols, vals := make([][]int32, len(parts)), make([][]int64, len(parts)), make([][]float64, len(parts))
	for k, p := range parts {
		lens[k], cols[k], vals[k] = p.lens, p.cols, p.vals
	}
	return lowerPart{slices.Concat(lens...), slices.Concat(cols...), slices.Concat(vals...)}
}

// mirror writes into out the entries of the local system that block b, whose
// first row is global row first, gives: every a_ij of b, followed by a_ji
// unless it is on the diagonal, in row order. It returns how many it wrote.
// Every chunk of rows finds where its rows start in b and in out, then
// writes its entries there, on its own core.
func mirror(out []csr.Entry[float64], b lowerPart, first int64, local func(int64) int32) int {
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
	parallel.For(len(b.lens), func(c, lo, hi int) {
		pos := src[c]
		for i, n := range b.lens[lo:hi] {
			pos += int(n)
			dst[c+1] += 2 * int(n)
			if n > 0 && b.cols[pos-1] == first+int64(lo+i) { // the diagonal, last in its row
				dst[c+1]--
			}
		}
	})
	for c := range k {
		dst[c+1] += dst[c]
	}
	parallel.For(len(b.lens), func(c, lo, hi int) {
		pos, w := src[c], dst[c]
		for i, n := range b.lens[lo:hi] {
			row := local(first + int64(lo+i))
			for j := pos; j < pos+int(n); j++ {
				col := local(b.cols[j])
				out[w] = csr.Entry[float64]{Row: row, Col: col, Val: b.vals[j]}
				w++
				if col != row {
					out[w] = csr.Entry[float64]{Row: col, Col: row, Val: b.vals[j]}
					w++
				}
			}
			pos += int(n)
		}
	})
	return dst[k]
}

// gatherLocal collects the lower blocks of A that this rank's stripe of G
// needs from its left neighbours in Low(Â^power), in two nonblocking stages
// (sizes, then blocks), and assembles the local system, completing the
// upper part by symmetry. Collective.
func gatherLocal(A *dsmat.Matrix, power int) (*localSystem, error) {
	c := A.Comm
	np, me := c.Size(), c.Rank()
	g, err := blockGraph(A)
	if err != nil {
		return nil, err
	}
	sets := lowerSets(g, np, power)
	sources := sets[me][:len(sets[me])-1] // the left neighbours; me is last

	// stage 1: sizes. Rank me sends to every p > me whose set holds me.
	var targets []int
	var parts []lowerPart
	for p := me + 1; p < np; p++ {
		if _, in := slices.BinarySearch(sets[p], me); in {
			targets = append(targets, p)
			parts = append(parts, lower(A, sets[p]))
		}
	}
	sendSize := comm.NewBuf[int64](len(targets))
	recvSize := comm.NewBuf[int64](len(sources))
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
		if err := post(comm.Irecv(c, recvSize.Slice(k, 1), q, tagSize)); err != nil {
			return nil, err
		}
	}
	for k, p := range targets {
		sendSize.Data[k] = int64(len(parts[k].cols))
		if err := post(comm.Isend(c, sendSize.Slice(k, 1), p, tagSize)); err != nil {
			return nil, err
		}
	}
	if err := comm.Waitall(reqs); err != nil {
		return nil, fmt.Errorf("afsai: collect block sizes: %w", err)
	}

	// stage 2: the blocks
	reqs = reqs[:0]
	type msg struct {
		lens *comm.Buf[int32]
		cols *comm.Buf[int64]
		vals *comm.Buf[float64]
	}
	newMsg := func(rows, nnz int) msg {
		return msg{comm.NewBuf[int32](rows), comm.NewBuf[int64](nnz), comm.NewBuf[float64](nnz)}
	}
	var msgs []msg
	defer func() {
		for _, m := range msgs {
			m.lens.Free()
			m.cols.Free()
			m.vals.Free()
		}
	}()
	var received int64
	for k, q := range sources {
		m := newMsg(A.Part.Size(q), int(recvSize.Data[k]))
		msgs = append(msgs, m)
		received += 4*int64(len(m.lens.Data)) + 16*int64(len(m.cols.Data))
		for _, err := range []error{
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
		copy(m.lens.Data, parts[k].lens)
		copy(m.cols.Data, parts[k].cols)
		copy(m.vals.Data, parts[k].vals)
		for _, err := range []error{
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

	// assemble: local numbering is the stripes of the set, in rank order
	set := sets[me]
	ls := &localSystem{}
	base := make(map[int]int64, len(set))
	for _, q := range set {
		lo, hi := A.Part.Range(q)
		base[q] = int64(len(ls.global)) - lo
		for gi := lo; gi < hi; gi++ {
			ls.global = append(ls.global, gi)
		}
	}
	local := func(gi int64) int32 { return int32(gi + base[A.Part.Owner(gi)]) }
	blocks := make([]lowerPart, 0, len(set))
	for k := range sources {
		blocks = append(blocks, lowerPart{msgs[k].lens.Data, msgs[k].cols.Data, msgs[k].vals.Data})
	}
	blocks = append(blocks, lower(A, set))
	total := 0
	for _, b := range blocks {
		total += 2 * len(b.cols)
	}
	entries := make([]csr.Entry[float64], total)
	n := 0
	for k, b := range blocks {
		first, _ := A.Part.Range(set[k])
		n += mirror(entries[n:], b, first, local)
	}
	entries = entries[:n]
	m := len(ls.global)
	ls.A = csr.FromEntries(m, m, entries)
	ls.assembledBytes = csrBytes(ls.A)
	ls.peakBytes = received + 16*int64(cap(entries)) + ls.assembledBytes
	lo, _ := A.Part.Range(me)
	ls.own = make([]int, A.LocalRows())
	parallel.For(len(ls.own), func(_, a, b int) {
		for i := a; i < b; i++ {
			ls.own[i] = int(local(lo + int64(i)))
		}
	})
	return ls, nil
}

// csrBytes is the memory of a float64 CSR block.
func csrBytes(a *csr.Matrix[float64]) int64 {
	return 4*int64(len(a.RowPtr)) + 12*int64(a.NNZ())
}
