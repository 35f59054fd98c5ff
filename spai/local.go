package spai

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Local is what a rank's rows of M are computed from: its own stripe of A
// and the rows of other ranks within K hops of its rows in the graph of
// A~, whole, with global columns; every row's largest magnitude beside it.
type Local struct {
	// the own rows are global rows First to First+Count()-1 of N
	N, First int64
	count    int
	OwnMax   []float64
	// the collected rows, ascending by global index: row HeldRows[k] has
	// columns HeldCol[HeldPtr[k]:HeldPtr[k+1]] and values HeldVal there
	HeldRows []int64
	HeldPtr  []int64
	HeldCol  []int64
	HeldVal  []float64
	HeldMax  []float64
	// OwnForeign are the columns of the own rows outside their range,
	// ascending, once each
	OwnForeign []int64
	// Diag is A's diagonal block where the local system was collected from
	// a matrix that has one: the own rows' entries in own columns, numbered
	// from 0. Bound is Diag as the backend holds it already, where the
	// caller has it there (NewFor), and nil otherwise: a Device may read it
	// where it lies, and the own rows' other entries (ForeignEntries),
	// instead of the own rows in global columns (Own).
	Diag  *csr.Matrix[float64]
	Bound backend.Matrix

	// own are the own rows in global columns, made from a on first use
	// where collect left them out (Own), in ownS seconds
	own     *dsmat.Rows
	a       *dsmat.Matrix
	ownOnce sync.Once
	ownS    float64
}

// NewLocal returns the local system of a rank that holds all the rows
// its rows of M need in own (one rank, or a test's whole matrix): own's
// rows after checking them (checkRows).
func NewLocal(own *dsmat.Rows) (*Local, error) {
	l, err := checkedLocal(own)
	if err != nil {
		return nil, err
	}
	l.OwnForeign = foreignOf(own)
	return l, nil
}

// checkedLocal returns the local system of the own rows own, checked, with
// no rows collected and OwnForeign unset.
func checkedLocal(own *dsmat.Rows) (*Local, error) {
	max, err := checkRows(own)
	if err != nil {
		return nil, err
	}
	return &Local{N: own.N, First: own.First, count: own.Count(), OwnMax: max, HeldPtr: []int64{0}, own: own}, nil
}

// checkedBlocks returns the local system of A's own rows, checked on A's
// blocks (blockMax) without the own rows in global columns, with no rows
// collected and OwnForeign unset. A has a diagonal block.
func checkedBlocks(A *dsmat.Matrix) (*Local, error) {
	l := &Local{N: A.N(), First: A.First(), count: A.Diag.Rows, HeldPtr: []int64{0}, a: A}
	max, ok := blockMax(A)
	if !ok { // the own rows name the first bad entry as checkRows does
		_, err := checkRows(l.Own())
		return nil, err
	}
	l.OwnMax = max
	return l, nil
}

// Count is the number of own rows.
func (l *Local) Count() int { return l.count }

// Own returns the own rows in global columns. A local system collected
// for a device that reads A's diagonal block where the backend holds it
// makes them on the first call only: at k = 1 that device needs none of
// them. Their seconds count in own_s.
func (l *Local) Own() *dsmat.Rows {
	l.ownOnce.Do(func() {
		if l.own == nil {
			t := time.Now()
			l.own = ownRows(l.a)
			l.ownS = time.Since(t).Seconds()
		}
	})
	return l.own
}

// OwnNNZ is the number of entries of the own rows.
func (l *Local) OwnNNZ() int64 {
	if l.a != nil && l.a.Diag != nil {
		n := int64(l.a.Diag.NNZ())
		for b := range l.a.Off {
			n += int64(l.a.Off[b].A.NNZ())
		}
		return n
	}
	own := l.Own()
	return own.RowPtr[own.Count()] - own.RowPtr[0]
}

// ForeignEntries returns the own rows' entries in other ranks' columns:
// the own rows that hold any (indices from First, ascending), and row k's
// global columns cols[ptr[k]:ptr[k+1]] (ascending) and values vals there.
// It reads A's off-diagonal blocks where l was collected from A, which
// store those rows alone, and scans the own rows otherwise.
func (l *Local) ForeignEntries() (rows []int32, ptr, cols []int64, vals []float64) {
	ptr = []int64{0}
	if l.a != nil && l.a.Diag != nil {
		off := l.a.Off
		next := make([]int, len(off)) // each block's next stored row
		for edge := nextEdge(off, next); edge != math.MaxInt; edge = nextEdge(off, next) {
			for b := range off { // owners ascend with columns: the row comes out sorted
				blk := &off[b]
				if k := next[b]; k < len(blk.Rows) && int(blk.Rows[k]) == edge {
					for e := blk.A.RowPtr[k]; e < blk.A.RowPtr[k+1]; e++ {
						cols = append(cols, blk.Cols[blk.A.ColIdx[e]])
						vals = append(vals, blk.A.Val[e])
					}
					next[b] = k + 1
				}
			}
			rows, ptr = append(rows, int32(edge)), append(ptr, int64(len(cols)))
		}
		return rows, ptr, cols, vals
	}
	own := l.Own()
	lo, hi := l.First, l.First+int64(l.count)
	for i := range l.count {
		at := len(cols)
		for e := own.RowPtr[i]; e < own.RowPtr[i+1]; e++ {
			if c := own.Col[e]; c < lo || c >= hi {
				cols, vals = append(cols, c), append(vals, own.Val[e])
			}
		}
		if len(cols) > at {
			rows, ptr = append(rows, int32(i)), append(ptr, int64(len(cols)))
		}
	}
	return rows, ptr, cols, vals
}

// foreignOf returns the columns of r's rows outside r's range, ascending,
// once each, on all cores.
func foreignOf(r *dsmat.Rows) []int64 {
	if r.First == 0 && int64(r.Count()) == r.N { // the whole matrix: none
		return nil
	}
	return outside(r.RowPtr, r.Col, r.First, r.First+int64(r.Count()))
}

// ForeignColumns returns the columns of the local system's rows outside
// the own range, ascending, once each: OwnForeign joined with the
// collected rows', on all cores.
func (l *Local) ForeignColumns() []int64 {
	lo, hi := l.First, l.First+int64(l.count)
	return parallel.SortedUnion([][]int64{l.OwnForeign, outside(l.HeldPtr, l.HeldCol, lo, hi)})
}

// outside returns the columns outside [lo, hi) of the rows whose columns
// are col[ptr[k]:ptr[k+1]], ascending, once each: each chunk of rows
// lists and sorts its own on all cores, and the lists are joined.
func outside(ptr, col []int64, lo, hi int64) []int64 {
	n := len(ptr) - 1
	parts := make([][]int64, parallel.Chunks(n))
	parallel.For(n, func(ch, a, b int) {
		var out []int64
		for _, c := range col[ptr[a]:ptr[b]] {
			if c < lo || c >= hi {
				out = append(out, c)
			}
		}
		slices.Sort(out)
		parts[ch] = slices.Compact(out)
	})
	return parallel.SortedUnion(parts)
}

// haloColumns returns the columns of A's off-diagonal blocks, ascending,
// once each: the columns of the rank's rows outside its range, which the
// blocks list in rank order.
func haloColumns(A *dsmat.Matrix) []int64 {
	var out []int64
	for b := range A.Off {
		out = append(out, A.Off[b].Cols...)
	}
	return out
}

// Row returns the columns, values and largest magnitude of global row g;
// ok is false when the local system does not hold it.
func (l *Local) Row(g int64) (cols []int64, vals []float64, max float64, ok bool) {
	if i := g - l.First; i >= 0 && i < int64(l.count) {
		own := l.Own()
		a, b := own.RowPtr[i], own.RowPtr[i+1]
		return own.Col[a:b], own.Val[a:b], l.OwnMax[i], true
	}
	k, found := slices.BinarySearch(l.HeldRows, g)
	if !found {
		return nil, nil, 0, false
	}
	a, b := l.HeldPtr[k], l.HeldPtr[k+1]
	return l.HeldCol[a:b], l.HeldVal[a:b], l.HeldMax[k], true
}

// kept reports whether entry (r, c) of value v is in A~: the diagonal, or
// |v| > (1 - tau) max, max the largest magnitude of row r.
func kept(r, c int64, v, max, tau float64) bool {
	return c == r || math.Abs(v) > (1-tau)*max
}

// checkRows returns the largest magnitude of every row of r and refuses a
// value that is not finite and a row that holds no nonzero (A is then
// singular, and no row of M can be fitted to it). Rows count from 1 in
// the messages, as Matrix Market and the command line count them.
func checkRows(r *dsmat.Rows) ([]float64, error) {
	n := r.Count()
	max := make([]float64, n)
	err := parallel.ForErr(n, func(_, lo, hi int) error {
		for i := lo; i < hi; i++ {
			g := r.First + int64(i) + 1
			for e := r.RowPtr[i]; e < r.RowPtr[i+1]; e++ {
				v := math.Abs(r.Val[e])
				if !(v <= math.MaxFloat64) { // NaN or infinite
					return fmt.Errorf("spai: A(%d,%d) = %g is not finite", g, r.Col[e]+1, r.Val[e])
				}
				if v > max[i] { // math.Max's care for NaN and -0 is not needed here
					max[i] = v
				}
			}
			if max[i] == 0 {
				return fmt.Errorf("spai: row %d of A holds no nonzero: A is singular", g)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return max, nil
}

// blockMax returns the largest magnitude of every own row of A, read off
// its diagonal and off-diagonal blocks, on all cores, and whether every
// value is finite and every row holds a nonzero (what checkRows checks).
func blockMax(A *dsmat.Matrix) ([]float64, bool) {
	d := A.Diag
	max := make([]float64, d.Rows)
	bad := make([]bool, parallel.Chunks(d.Rows))
	parallel.For(d.Rows, func(ch, lo, hi int) {
		finite := true
		for i := lo; i < hi; i++ {
			max[i], finite = largest(0, d.Val[d.RowPtr[i]:d.RowPtr[i+1]], finite)
		}
		bad[ch] = !finite
	})
	ok := !slices.Contains(bad, true)
	for b := range A.Off {
		blk := &A.Off[b]
		for k, i := range blk.Rows {
			max[i], ok = largest(max[i], blk.A.Val[blk.A.RowPtr[k]:blk.A.RowPtr[k+1]], ok)
		}
	}
	return max, ok && !slices.Contains(max, 0)
}

// largest returns the largest of m and the magnitudes of the finite
// values of vals, and whether finite holds and every value is finite.
func largest(m float64, vals []float64, finite bool) (float64, bool) {
	for _, v := range vals {
		a := math.Abs(v)
		if !(a <= math.MaxFloat64) { // NaN or infinite
			finite = false
		} else if a > m {
			m = a
		}
	}
	return m, finite
}

// collect returns the rank's local system: its stripe of A and the rows
// of other ranks within K hops of its rows in the graph of A~. Round r
// (of K) asks the owners for the rows the kept entries of the rows of the
// last round name and it does not hold; one Alltoall and four Alltoallv a
// round. The rows one hop away are read off A's off-diagonal blocks
// (edgeAsks), not from a scan of every own row. One rank holds every row
// and asks for none. It records the seconds of its own rows' copy and
// checks in st. With blocksOnly (a device that reads A's diagonal block
// where the backend holds it) and a diagonal block, the own rows are
// checked and served on A's blocks and not copied into global columns
// (Local.Own makes them where still needed). Collective.
func collect(A *dsmat.Matrix, p Params, st *Stages, blocksOnly bool) (*Local, error) {
	c := A.Comm
	var (
		l   *Local
		err error
	)
	if blocksOnly && A.Diag != nil {
		t := time.Now()
		l, err = checkedBlocks(A)
		st.CheckS = time.Since(t).Seconds()
	} else {
		t := time.Now()
		own := ownRows(A)
		st.OwnS = time.Since(t).Seconds()
		t = time.Now()
		l, err = checkedLocal(own)
		st.CheckS = time.Since(t).Seconds()
	}
	if err := c.Agree(err); err != nil {
		return nil, err
	}
	l.a, l.Diag = A, A.Diag
	l.OwnForeign = haloColumns(A)
	if c.Size() == 1 {
		return l, nil
	}
	held := &heldRows{ptr: []int64{0}}
	asks := edgeAsks(A, l.OwnMax, p.Tau)
	var seen map[int64]bool // rows of other ranks asked for, made where K > 1
	for round := range p.K {
		first := len(held.rows)
		if err := fetchRows(c, l, asks, held); err != nil {
			return nil, err
		}
		if round+1 == p.K { // the last round's rows are needed whole, not followed
			break
		}
		if seen == nil {
			seen = map[int64]bool{}
			for _, g := range slices.Concat(asks...) {
				seen[g] = true
			}
		}
		asks = make([][]int64, c.Size())
		for _, g := range held.wanted(first, p.Tau) {
			if g >= l.First && g < l.First+int64(l.count) || seen[g] {
				continue
			}
			seen[g] = true
			q := A.Part.Owner(g)
			asks[q] = append(asks[q], g)
		}
	}
	l.setHeld(held)
	return l, nil
}

// ownRows returns the rank's stripe of A in global columns, as A.Rows
// does, on all cores. A stripe with no entry in other ranks' columns (one
// rank's) is A's diagonal block alone, in the same order: its values are
// then the block's own, shared rather than copied, which the local system
// only reads, and only its columns are widened. Otherwise only the rows
// the off-diagonal blocks store (the stripe's edge rows) are joined: each
// one's entries of the left blocks, the diagonal block and the right
// blocks in turn (owners ascend with columns, so the row comes out
// sorted); the runs of rows between them are the diagonal block's alone,
// and each run's values are one copy.
func ownRows(A *dsmat.Matrix) *dsmat.Rows {
	d := A.Diag
	if d == nil {
		return A.Rows()
	}
	first := A.First()
	if len(A.Off) == 0 {
		r := &dsmat.Rows{N: A.N(), First: first, RowPtr: make([]int64, d.Rows+1), Col: make([]int64, len(d.ColIdx)),
			Val: d.Val[:len(d.ColIdx)]}
		parallel.For(d.Rows, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				r.RowPtr[i+1] = int64(d.RowPtr[i+1])
			}
			widen(r.Col[d.RowPtr[lo]:d.RowPtr[hi]], d.ColIdx[d.RowPtr[lo]:d.RowPtr[hi]], first)
		})
		return r
	}
	n := d.Rows
	r := &dsmat.Rows{N: A.N(), First: first, RowPtr: make([]int64, n+1)}
	parallel.For(n, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			r.RowPtr[i+1] = int64(d.RowPtr[i+1] - d.RowPtr[i])
		}
		for b := range A.Off {
			blk := &A.Off[b]
			for k := firstStored(blk, lo); k < len(blk.Rows) && int(blk.Rows[k]) < hi; k++ {
				r.RowPtr[blk.Rows[k]+1] += int64(blk.A.RowPtr[k+1] - blk.A.RowPtr[k])
			}
		}
	})
	parallel.Accumulate(r.RowPtr)
	r.Col, r.Val = make([]int64, r.NNZ()), make([]float64, r.NNZ())
	me := A.Comm.Rank()
	parallel.For(n, func(_, lo, hi int) {
		next := make([]int, len(A.Off)) // each block's next stored row
		for b := range next {
			next[b] = firstStored(&A.Off[b], lo)
		}
		for i := lo; i < hi; {
			edge := min(nextEdge(A.Off, next), hi)
			putDiagRows(r, d, first, i, edge)
			if edge == hi {
				break
			}
			at, b := r.RowPtr[edge], 0
			for ; b < len(A.Off) && A.Off[b].Rank < me; b++ {
				at = putOffRow(r, at, &A.Off[b], &next[b], edge)
			}
			a, z := d.RowPtr[edge], d.RowPtr[edge+1]
			widen(r.Col[at:at+int64(z-a)], d.ColIdx[a:z], first)
			copy(r.Val[at:], d.Val[a:z])
			at += int64(z - a)
			for ; b < len(A.Off); b++ {
				at = putOffRow(r, at, &A.Off[b], &next[b], edge)
			}
			i = edge + 1
		}
	})
	return r
}

// nextEdge returns the first row any of the blocks stores from their next
// stored rows next on: the next row with entries in other ranks' columns
// (math.MaxInt if none).
func nextEdge(off []dsmat.Block, next []int) int {
	edge := math.MaxInt
	for b, k := range next {
		if k < len(off[b].Rows) {
			edge = min(edge, int(off[b].Rows[k]))
		}
	}
	return edge
}

// putDiagRows writes the diagonal block d's rows [lo, hi), which have no
// entries in other ranks' columns, to r in global columns: their entries
// follow one another in d and in r, so the values are one copy.
func putDiagRows(r *dsmat.Rows, d *csr.Matrix[float64], first int64, lo, hi int) {
	a, z := d.RowPtr[lo], d.RowPtr[hi]
	at := r.RowPtr[lo]
	widen(r.Col[at:at+int64(z-a)], d.ColIdx[a:z], first)
	copy(r.Val[at:], d.Val[a:z])
}

// widen sets dst to the local columns src offset by first.
func widen(dst []int64, src []int32, first int64) {
	for k, c := range src {
		dst[k] = first + int64(c)
	}
}

// firstStored returns the first stored row of blk at or after local row i.
func firstStored(blk *dsmat.Block, i int) int {
	k, _ := slices.BinarySearch(blk.Rows, int32(i))
	return k
}

// putOffRow writes blk's entries of local row i, if its next stored row
// *next is i, to r from entry at in global columns, and returns where the
// row's next entry goes.
func putOffRow(r *dsmat.Rows, at int64, blk *dsmat.Block, next *int, i int) int64 {
	k := *next
	if k >= len(blk.Rows) || int(blk.Rows[k]) != i {
		return at
	}
	a, b := blk.A.RowPtr[k], blk.A.RowPtr[k+1]
	for e := a; e < b; e++ {
		r.Col[at+int64(e-a)] = blk.Cols[blk.A.ColIdx[e]]
	}
	copy(r.Val[at:], blk.A.Val[a:b])
	*next = k + 1
	return at + int64(b-a)
}

// edgeAsks returns, per rank q, the rows of q one hop from the rank's rows
// in the graph of A~, ascending: the columns of the kept entries of A's
// off-diagonal block of q, whose rows' largest magnitudes max holds. Only
// the rows those blocks store (the stripe's rows with entries in other
// ranks' columns) are read, and A's halo lists the columns each block
// names, ascending and once each, so no row is asked twice.
func edgeAsks(A *dsmat.Matrix, max []float64, tau float64) [][]int64 {
	asks := make([][]int64, A.Comm.Size())
	first := A.First()
	for b := range A.Off {
		blk := &A.Off[b]
		keep := make([]bool, len(blk.Cols))
		for k, i := range blk.Rows {
			for e := blk.A.RowPtr[k]; e < blk.A.RowPtr[k+1]; e++ {
				j := blk.A.ColIdx[e]
				keep[j] = keep[j] || kept(first+int64(i), blk.Cols[j], blk.A.Val[e], max[i], tau)
			}
		}
		for j, g := range blk.Cols {
			if keep[j] {
				asks[blk.Rank] = append(asks[blk.Rank], g)
			}
		}
	}
	return asks
}

// heldRows are the rows collected so far, in the order they arrived.
type heldRows struct {
	rows []int64
	ptr  []int64
	col  []int64
	val  []float64
	max  []float64
}

// wanted returns the columns of the kept entries of the rows from first
// on.
func (h *heldRows) wanted(first int, tau float64) []int64 {
	var out []int64
	for k := first; k < len(h.rows); k++ {
		for e := h.ptr[k]; e < h.ptr[k+1]; e++ {
			if kept(h.rows[k], h.col[e], h.val[e], h.max[k], tau) && h.col[e] != h.rows[k] {
				out = append(out, h.col[e])
			}
		}
	}
	return out
}

// setHeld stores the collected rows in l, sorted by global index.
func (l *Local) setHeld(h *heldRows) {
	order := make([]int, len(h.rows))
	for k := range order {
		order[k] = k
	}
	sort.Slice(order, func(a, b int) bool { return h.rows[order[a]] < h.rows[order[b]] })
	l.HeldRows = make([]int64, len(order))
	l.HeldMax = make([]float64, len(order))
	l.HeldPtr = make([]int64, len(order)+1)
	l.HeldCol = make([]int64, 0, len(h.col))
	l.HeldVal = make([]float64, 0, len(h.val))
	for k, o := range order {
		l.HeldRows[k], l.HeldMax[k] = h.rows[o], h.max[o]
		l.HeldCol = append(l.HeldCol, h.col[h.ptr[o]:h.ptr[o+1]]...)
		l.HeldVal = append(l.HeldVal, h.val[h.ptr[o]:h.ptr[o+1]]...)
		l.HeldPtr[k+1] = int64(len(l.HeldCol))
	}
}

// fetchRows sends every rank q the global rows asks[q] (rows q owns) and
// appends the rows the others ask of own to h, whole: counts, then the
// row numbers, the rows' lengths, columns and values. Collective; every
// rank returns the same error or none.
func fetchRows(c *comm.Comm, l *Local, asks [][]int64, h *heldRows) error {
	np := c.Size()
	sendN, recvN := make([]int64, np), make([]int64, np)
	var flat []int64
	for q, a := range asks {
		sendN[q] = int64(len(a))
		flat = append(flat, a...)
	}
	if err := comm.Alltoall(c, sendN, recvN); err != nil {
		return fmt.Errorf("spai: collect rows: %w", err)
	}
	sendC, recvC := ints(sendN), ints(recvN)
	got := make([]int64, sum(recvC))
	if err := comm.Alltoallv(c, flat, sendC, got, recvC); err != nil {
		return fmt.Errorf("spai: collect rows: %w", err)
	}

	// serve: the rows asked of this rank and their lengths, in the order
	// asked
	lens, cols, vals, bad := l.serveRows(got, recvC)
	entries := perRank(lens, recvC)
	rowLens := make([]int64, len(flat))
	if err := comm.Alltoallv(c, lens, recvC, rowLens, sendC); err != nil {
		return fmt.Errorf("spai: collect rows: %w", err)
	}
	if err := c.Agree(bad); err != nil {
		return err
	}
	inEntries := perRank(rowLens, sendC)
	inCols := make([]int64, sum(inEntries))
	inVals := make([]float64, len(inCols))
	if err := comm.Alltoallv(c, cols, entries, inCols, inEntries); err != nil {
		return fmt.Errorf("spai: collect rows: %w", err)
	}
	if err := comm.Alltoallv(c, vals, entries, inVals, inEntries); err != nil {
		return fmt.Errorf("spai: collect rows: %w", err)
	}
	h.add(flat, rowLens, inCols, inVals)
	return nil
}

// serveRows returns the own rows got, asked by the ranks in the counts
// recvC, whole and one after the other: their lengths, global columns and
// values, on all cores. A row this rank does not own is an error (bad)
// and served empty.
func (l *Local) serveRows(got []int64, recvC []int) (lens, cols []int64, vals []float64, bad error) {
	lens = make([]int64, len(got))
	parallel.For(len(got), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			if i := got[k] - l.First; i >= 0 && i < int64(l.count) {
				lens[k] = int64(l.ownRowLen(int(i)))
			}
		}
	})
	at := make([]int64, len(got)+1)
	for k, n := range lens {
		at[k+1] = at[k] + n
	}
	cols, vals = make([]int64, at[len(got)]), make([]float64, at[len(got)])
	parallel.For(len(got), func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			if i := got[k] - l.First; i >= 0 && i < int64(l.count) {
				l.appendOwnRow(cols[at[k]:at[k]:at[k+1]], vals[at[k]:at[k]:at[k+1]], int(i))
			}
		}
	})
	from := 0
	for q, n := range recvC {
		for _, g := range got[from : from+n] {
			if i := g - l.First; i < 0 || i >= int64(l.count) {
				bad = fmt.Errorf("spai: collect rows: rank %d asks for row %d, which this rank does not own", q, g)
			}
		}
		from += n
	}
	return lens, cols, vals, bad
}

// ownRowLen is the number of entries of own row i.
func (l *Local) ownRowLen(i int) int {
	if l.own != nil {
		return int(l.own.RowPtr[i+1] - l.own.RowPtr[i])
	}
	d := l.a.Diag
	n := int(d.RowPtr[i+1] - d.RowPtr[i])
	for b := range l.a.Off {
		cs, _ := l.a.Off[b].Row(i)
		n += len(cs)
	}
	return n
}

// appendOwnRow appends own row i in global columns to cols and vals:
// from the own rows where they are made, else joined from A's blocks as
// ownRows joins it (the left blocks' entries, the diagonal block's, the
// right blocks').
func (l *Local) appendOwnRow(cols []int64, vals []float64, i int) ([]int64, []float64) {
	if l.own != nil {
		a, b := l.own.RowPtr[i], l.own.RowPtr[i+1]
		return append(cols, l.own.Col[a:b]...), append(vals, l.own.Val[a:b]...)
	}
	A, d := l.a, l.a.Diag
	me, b := A.Comm.Rank(), 0
	for ; b < len(A.Off) && A.Off[b].Rank < me; b++ {
		cols, vals = appendOffRow(cols, vals, &A.Off[b], i)
	}
	a, z := d.RowPtr[i], d.RowPtr[i+1]
	for _, c := range d.ColIdx[a:z] {
		cols = append(cols, l.First+int64(c))
	}
	vals = append(vals, d.Val[a:z]...)
	for ; b < len(A.Off); b++ {
		cols, vals = appendOffRow(cols, vals, &A.Off[b], i)
	}
	return cols, vals
}

// appendOffRow appends blk's entries of local row i, in global columns,
// to cols and vals.
func appendOffRow(cols []int64, vals []float64, blk *dsmat.Block, i int) ([]int64, []float64) {
	cs, vs := blk.Row(i)
	for _, c := range cs {
		cols = append(cols, blk.Cols[c])
	}
	return cols, append(vals, vs...)
}

// add appends the rows rows, of lengths lens, whose entries follow one
// another in cols and vals.
func (h *heldRows) add(rows, lens, cols []int64, vals []float64) {
	first, at := len(h.rows), int64(len(h.col))
	h.rows = append(h.rows, rows...)
	h.col = append(h.col, cols...)
	h.val = append(h.val, vals...)
	for _, n := range lens {
		at += n
		h.ptr = append(h.ptr, at)
	}
	h.max = append(h.max, make([]float64, len(rows))...)
	parallel.For(len(rows), func(_, lo, hi int) {
		for k := first + lo; k < first+hi; k++ {
			var m float64
			for _, v := range h.val[h.ptr[k]:h.ptr[k+1]] {
				m = math.Max(m, math.Abs(v))
			}
			h.max[k] = m
		}
	})
}

// perRank sums lens by rank: counts[q] of them, one rank's after the
// other's.
func perRank(lens []int64, counts []int) []int {
	out := make([]int, len(counts))
	at := 0
	for q, n := range counts {
		for _, v := range lens[at : at+n] {
			out[q] += int(v)
		}
		at += n
	}
	return out
}

// ints converts counts to int.
func ints(n []int64) []int {
	out := make([]int, len(n))
	for k, v := range n {
		out[k] = int(v)
	}
	return out
}

func sum(n []int) int {
	s := 0
	for _, v := range n {
		s += v
	}
	return s
}
