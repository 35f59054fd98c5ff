package spai

import (
	"sync"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Blocks are the least-squares problems of consecutive own rows, laid out
// one after the other for a Device to solve: problem k is the block C_k =
// A(J_k,I_k)' (Rows[k] x Cols[k], column-major, from C[COff[k]]) and the
// right-hand side e_i(I_k) (Rows[k] entries from B[BOff[k]]), whose
// solution the Device leaves in B[BOff[k]:BOff[k]+Cols[k]] (Rows does the
// same on the host). Pattern[PatPtr[k]:PatPtr[k+1]] is J_k.
type Blocks struct {
	First      int64 // the global row of problem 0; the others follow it
	Rows, Cols []int32
	COff, BOff []int64 // len(Rows)+1 offsets
	C, B       []float64
	PatPtr     []int64
	Pattern    []int64
	Stats      Stats
}

// NewBlocks gathers the problems of own rows [lo, hi) of l on all cores,
// refusing a row as Rows does (no row of its pattern with an entry in
// column i).
func NewBlocks(l *Local, p Params, lo, hi int) (*Blocks, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	n := hi - lo
	parts := make([]*Blocks, parallel.Chunks(n))
	err := parallel.ForErr(n, func(ch, a, b int) error {
		w := &worker{l: l, p: p, seen: map[int64]bool{}}
		out := newBlocks(l.Own.First + int64(lo+a))
		for i := lo + a; i < lo+b; i++ {
			g := l.Own.First + int64(i)
			if err := w.pattern(g); err != nil {
				return err
			}
			if err := w.block(g); err != nil {
				return err
			}
			out.add(w)
		}
		parts[ch] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	return joinBlocks(l.Own.First+int64(lo), parts), nil
}

func newBlocks(first int64) *Blocks {
	return &Blocks{First: first, COff: []int64{0}, BOff: []int64{0}, PatPtr: []int64{0}}
}

// add appends w's block.
func (b *Blocks) add(w *worker) {
	m, n := len(w.I), len(w.J)
	b.Rows = append(b.Rows, int32(m))
	b.Cols = append(b.Cols, int32(n))
	b.C = append(b.C, w.c[:m*n]...)
	b.B = append(b.B, w.b[:m]...)
	b.COff = append(b.COff, int64(len(b.C)))
	b.BOff = append(b.BOff, int64(len(b.B)))
	b.Pattern = append(b.Pattern, w.J...)
	b.PatPtr = append(b.PatPtr, int64(len(b.Pattern)))
	b.Stats = b.Stats.Max(Stats{MaxBlockRows: m, MaxBlockCols: n})
}

// joinBlocks lays the problems of parts, which follow each other from
// global row first, out as one Blocks, copying the parts on all cores.
func joinBlocks(first int64, parts []*Blocks) *Blocks {
	if len(parts) == 1 {
		return parts[0]
	}
	// start[k] counts the problems, entries of C and B and pattern entries
	// of the parts before part k.
	type counts struct{ p, c, b, pat int }
	start := make([]counts, len(parts)+1)
	all := &Blocks{First: first}
	for k, pt := range parts {
		s := start[k]
		start[k+1] = counts{s.p + pt.Len(), s.c + len(pt.C), s.b + len(pt.B), s.pat + len(pt.Pattern)}
		all.Stats = all.Stats.Max(pt.Stats)
	}
	t := start[len(parts)]
	all.Rows, all.Cols = make([]int32, t.p), make([]int32, t.p)
	all.COff, all.BOff, all.PatPtr = make([]int64, t.p+1), make([]int64, t.p+1), make([]int64, t.p+1)
	all.C, all.B, all.Pattern = make([]float64, t.c), make([]float64, t.b), make([]int64, t.pat)
	var wg sync.WaitGroup
	for k, pt := range parts {
		wg.Go(func() {
			s := start[k]
			copy(all.Rows[s.p:], pt.Rows)
			copy(all.Cols[s.p:], pt.Cols)
			copy(all.C[s.c:], pt.C)
			copy(all.B[s.b:], pt.B)
			copy(all.Pattern[s.pat:], pt.Pattern)
			for i := range pt.Len() {
				all.COff[s.p+i+1] = int64(s.c) + pt.COff[i+1]
				all.BOff[s.p+i+1] = int64(s.b) + pt.BOff[i+1]
				all.PatPtr[s.p+i+1] = int64(s.pat) + pt.PatPtr[i+1]
			}
		})
	}
	wg.Wait()
	return all
}

// BytesPerRow is the mean size in bytes of a problem's block, right-hand
// side, pattern and offsets.
func (b *Blocks) BytesPerRow() float64 {
	if b.Len() == 0 {
		return 0
	}
	return float64(8*(len(b.C)+len(b.B)+len(b.Pattern))+32*b.Len()) / float64(b.Len())
}

// Len is the number of problems.
func (b *Blocks) Len() int { return len(b.Rows) }

// Solve solves problem k on the host, as Rows does, in place; false when
// its block is rank deficient.
func (b *Blocks) Solve(k int) bool {
	m, n := int(b.Rows[k]), int(b.Cols[k])
	w := &worker{c: b.C[b.COff[k]:b.COff[k+1]], b: b.B[b.BOff[k]:b.BOff[k+1]]}
	return w.solve(m, n)
}

// AppendRows appends the solved rows of M to m, which holds the rows before
// them; bad[k] true marks problem k rank deficient, which is an error
// naming the row.
func (b *Blocks) AppendRows(m *dsmat.Rows, bad []bool) error {
	for k := range b.Rows {
		if bad[k] {
			return rankDeficient(b.First+int64(k), int(b.Rows[k]), int(b.Cols[k]))
		}
		n := int64(b.Cols[k])
		m.Col = append(m.Col, b.Pattern[b.PatPtr[k]:b.PatPtr[k+1]]...)
		m.Val = append(m.Val, b.B[b.BOff[k]:b.BOff[k]+n]...)
		m.RowPtr = append(m.RowPtr, int64(len(m.Col)))
	}
	return nil
}
