package afsai

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Marks of a row of the set's stripes, during the collection, in place of
// one more than its index among the held rows (ls.index). Zero, the value
// of fresh memory, marks the rows untouched, so the stripe-long arrays cost
// only the pages of the rows the collection reaches.
const (
	notHeld = 0  // neither held nor asked for
	asked   = -1 // asked for in this round
)

// collection is a rank's state during the block collection: as a collector,
// the local system it builds and the rows of the set's ranks it holds; as an
// owner, what it has sent to the ranks whose sets hold it.
type collection struct {
	A       *dsmat.Matrix
	sets    [][]int
	sources []int // the set's ranks but this one, which is last in the set
	targets []int // the ranks whose sets hold this one
	// ls.index[k] is, during the collection, one more than the held slot
	// of each row of sources[k]'s stripe, or notHeld or asked; assemble
	// turns the slots into local indices, one more as well
	ls   *localSystem
	held []heldRow
	msgs []rowMsg // the received rows; held rows lie in them
	sent [][]bool // per target, the rows of this stripe sent to it
	dist []int32  // per row of this stripe, one more than its distance in serve's search; 0 outside
	// further is set when a source's rows of the last exchange lead on
	// to another source's stripe (serve): a next search may find more
	further bool
	// single assembles the local system in single precision (a Split)
	single bool
}

// heldRow is where a held row's entries lie: in msgs[msg], n of them from
// at on; it is row row of sources[src]'s stripe.
type heldRow struct {
	msg, n   int32
	src, row int32
	at       int64
}

// newCollection starts a collection with nothing held.
func newCollection(A *dsmat.Matrix, sets [][]int, targets []int) *collection {
	set := sets[A.Comm.Rank()]
	x := &collection{A: A, sets: sets, sources: set[:len(set)-1], targets: targets,
		ls:   &localSystem{part: A.Part, set: set, index: make([][]int32, len(set))},
		sent: make([][]bool, len(targets))}
	for k, q := range x.sources {
		x.ls.index[k] = make([]int32, A.Part.Size(q)) // all notHeld
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

// exchangeAsks sends every source the rows this rank asks it for and
// returns the rows every target asks for: counts first, then the pairs.
func (x *collection) exchangeAsks(asks [][]int64) ([][]int64, error) {
	ns, nt := len(x.sources), len(x.targets)
	counts := comm.NewBuf[int64](ns + nt) // sent to the sources, then received from the targets
	defer counts.Free()
	ms := messages{c: x.A.Comm}
	for k, q := range x.sources {
		counts.Data[k] = int64(len(asks[k]))
		send(&ms, counts.Slice(k, 1), q, comm.TagAskCount)
	}
	for k, p := range x.targets {
		recv(&ms, counts.Slice(ns+k, 1), p, comm.TagAskCount)
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
		send(&ms, bufs[k], q, comm.TagAsk)
	}
	for k, p := range x.targets {
		n := counts.Data[ns+k]
		if n < 0 {
			return nil, fmt.Errorf("afsai: collect rows: rank %d asks for %d numbers", p, n)
		}
		bufs[ns+k] = comm.NewBuf[int64](int(n))
		recv(&ms, bufs[ns+k], p, comm.TagAsk)
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
// for its set, and whether it should search again (further[k]), and
// receives and holds the rows the sources send: sizes first, then the
// rows. x.further tells whether a source said to search again.
func (x *collection) exchangeRows(out [][]int32, further []bool) error {
	const words = 3 // rows, entries, search again
	ns, nt := len(x.sources), len(x.targets)
	sizes := comm.NewBuf[int64](words * (nt + ns)) // sent to the targets, then received from the sources
	defer sizes.Free()
	packs := make([]rowMsg, nt)
	defer func() {
		for _, m := range packs {
			m.free()
		}
	}()
	ms := messages{c: x.A.Comm}
	for k, q := range x.sources {
		recv(&ms, sizes.Slice(words*(nt+k), words), q, comm.TagSize)
	}
	for k, p := range x.targets {
		packs[k] = pack(x.A, x.sets[p], out[k])
		w := sizes.Data[words*k : words*(k+1)]
		w[0], w[1], w[2] = int64(len(out[k])), int64(len(packs[k].cols.Data)), 0
		if further[k] {
			w[2] = 1
		}
		send(&ms, sizes.Slice(words*k, words), p, comm.TagSize)
	}
	if err := ms.wait("sizes"); err != nil {
		return err
	}
	first := len(x.msgs)
	x.further = false
	for k, q := range x.sources {
		w := sizes.Data[words*(nt+k) : words*(nt+k+1)]
		rows, nnz := w[0], w[1]
		x.further = x.further || w[2] != 0
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

// hold records the rows of message msgs[j], from sources[k], as held, on
// all cores: each row's entries start at the sum of the lengths before it.
// A row outside the source's stripe, held already or repeated, or entries
// past the message, are an error.
func (x *collection) hold(k, j int) error {
	q, m := x.sources[k], x.msgs[j]
	lo, hi := x.A.Part.Range(q)
	idx := x.ls.index[k]
	rows, lens := m.rows.Data, m.lens.Data
	at := make([]int64, len(rows)+1)
	parallel.Scan(at, func(r int) int64 { return int64(lens[r]) })
	first := len(x.held)
	x.held = slices.Grow(x.held, len(rows))[:first+len(rows)]
	bad := make([]int, parallel.Chunks(len(rows))) // per chunk, one more than its first bad row
	parallel.For(len(rows), func(c, a, b int) {
		for r := a; r < b; r++ {
			gi, n := rows[r], lens[r]
			if gi < lo || gi >= hi || n < 0 || at[r+1] > int64(len(m.cols.Data)) || !claim(&idx[gi-lo], int32(first+r)+1) {
				bad[c] = r + 1
				return
			}
			x.held[first+r] = heldRow{msg: int32(j), n: n, src: int32(k), row: int32(gi - lo), at: at[r]}
		}
	})
	for _, b := range bad {
		if b > 0 {
			return fmt.Errorf("afsai: collect rows: rank %d sent row %d (%d entries): outside its stripe, sent before, or past the message",
				q, rows[b-1]+1, lens[b-1])
		}
	}
	if at[len(rows)] != int64(len(m.cols.Data)) {
		return fmt.Errorf("afsai: collect rows: rank %d sent %d entries, its rows hold %d", q, len(m.cols.Data), at[len(rows)])
	}
	return nil
}

// claim marks a row held, in the slot one less than s, unless it is held
// already (a mark above zero).
func claim(mark *int32, s int32) bool {
	for {
		old := atomic.LoadInt32(mark)
		if old > 0 {
			return false
		}
		if atomic.CompareAndSwapInt32(mark, old, s) {
			return true
		}
	}
}
